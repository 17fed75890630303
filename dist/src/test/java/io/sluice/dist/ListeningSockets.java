package io.sluice.dist;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The TCP sockets a process listens on, as the kernel reports them (Linux {@code /proc}): the addresses a
 * port is really bound to, whatever the configuration says. A socket is the process's when one of its file
 * descriptors points at the socket's inode.
 */
public final class ListeningSockets
{
    private static final String LISTEN = "0A";

    private ListeningSockets()
    {
    }

    /** Every listening TCP socket (IPv4 and IPv6) of process {@code pid}. */
    public static List<InetSocketAddress> of(final long pid) throws IOException
    {
        final Path process = Path.of("/proc", Long.toString(pid));
        final Set<String> inodes = socketInodes(process.resolve("fd"));
        final List<InetSocketAddress> listening = new ArrayList<>();
        for (final String table : List.of("tcp", "tcp6"))
        {
            final Path file = process.resolve("net").resolve(table);
            if (!Files.exists(file))
            {
                continue;
            }
            final List<String> lines = Files.readAllLines(file);
            for (final String line : lines.subList(1, lines.size()))
            {
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
                final String[] fields = line.trim().split("\\s+");
                if (fields.length > 9 && LISTEN.equals(fields[3]) && inodes.contains(fields[9]))
                {
                    listening.add(address(fields[1]));
                }
            }
        }
        return listening;
    }

    /** The listening sockets of {@code pid} on {@code port}. */
    public static List<InetSocketAddress> onPort(final long pid, final int port) throws IOException
    {
        return of(pid).stream().filter(socket -> socket.getPort() == port).toList();
    }

    private static Set<String> socketInodes(final Path fds) throws IOException
    {
        final Set<String> inodes = new HashSet<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(fds))
        {
            for (final Path fd : entries)
            {
                try
                {
                    final String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:["))
                    {
                        inodes.add(target.substring("socket:[".length(), target.length() - 1));
                    }
                }
                catch (final IOException closedMeanwhile)
                {
                    // a descriptor closed while listing: not a listener of ours any more
                }
            }
        }
        return inodes;
    }

    /** {@code 0100007F:1F90}: the address as 32-bit words in host (little-endian) order, then the port. */
    static InetSocketAddress address(final String hex)
    {
        final int colon = hex.indexOf(':');
        final String host = hex.substring(0, colon);
        final byte[] bytes = new byte[host.length() / 2];
        for (int word = 0; word < bytes.length / 4; word++)
        {
            for (int b = 0; b < 4; b++)
            {
                final int at = (word * 4 + 3 - b) * 2;
                bytes[word * 4 + b] = (byte) Integer.parseInt(host.substring(at, at + 2), 16);
            }
        }
        try
        {
            return new InetSocketAddress(InetAddress.getByAddress(bytes), Integer.parseInt(hex.substring(colon + 1), 16));
        }
        catch (final UnknownHostException e)
        {
            throw new IllegalArgumentException("not an address: " + hex, e);
        }
    }
}
