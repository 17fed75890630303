package io.sluice.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports for the servers tests start (in-JVM brokers, child processes), for every module's tests.
 * <p>
 * A port is handed out at most once per machine at a time: besides being bindable now, it is reserved by an exclusive
 * lock on a file under {@code java.io.tmpdir/sluice-test-ports}, held until this JVM exits (the kernel drops it even
 * after a kill -9). Without it, two builds side by side (a terminal and an IDE, or two test forks) picked the same
 * free port and the later bind failed; Ratis then exits the whole JVM. Ports come from below Linux's ephemeral range
 * (32768 and up), so no outgoing connection's local port takes a broker's port while it restarts, and away from the
 * standalone defaults (8080, 9600, 26501..26522) that a test may start the standalone on. Thread-safe.
 */
public final class LoopbackPorts
{
    static final int LOW = 20_000;
    static final int HIGH = 32_700;
    private static final int DEFAULTS_LOW = 26_500;
    private static final int DEFAULTS_HIGH = 26_600;
    private static final int MAX_ATTEMPTS = 2_000;
    private static final Path RESERVATIONS = Path.of(System.getProperty("java.io.tmpdir"), "sluice-test-ports");
    /** The ports this JVM reserved, with the open channel whose lock reserves each: never closed before exit. */
    private static final Map<Integer, FileChannel> RESERVED = new HashMap<>();

    private LoopbackPorts()
    {
    }

    /** One free port. */
    public static synchronized int freePort()
    {
        return reserve(1);
    }

    /** A free port P whose neighbour P + 1 is free too (a broker's command port and its Raft port). */
    public static synchronized int freePortPair()
    {
        return reserve(2);
    }

    /** Whether a port on loopback can be bound right now. */
    public static boolean isBindable(final int port)
    {
        try (ServerSocket socket = new ServerSocket())
        {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    private static int reserve(final int count)
    {
        final ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++)
        {
            final int first = random.nextInt(LOW, HIGH - count);
            if (first + count > DEFAULTS_LOW && first < DEFAULTS_HIGH)
            {
                continue;
            }
            int reserved = 0;
            while (reserved < count && isBindable(first + reserved) && tryReserve(first + reserved))
            {
                reserved++;
            }
            if (reserved == count)
            {
                return first;
            }
            // a port of the run was taken: the ones reserved before it stay reserved, unused (rare, and harmless)
        }
        throw new IllegalStateException("no " + count + " free loopback port(s) in " + LOW + ".." + HIGH);
    }

    private static boolean tryReserve(final int port)
    {
        if (RESERVED.containsKey(port))
        {
            return false;
        }
        try
        {
            Files.createDirectories(RESERVATIONS);
            final FileChannel channel = FileChannel.open(RESERVATIONS.resolve(port + ".lock"),
                StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            final FileLock lock;
            try
            {
                lock = channel.tryLock();
            }
            catch (final OverlappingFileLockException | IOException ex)
            {
                channel.close();
                return false;
            }
            if (lock == null)
            {
                channel.close(); // another JVM holds it
                return false;
            }
            RESERVED.put(port, channel);
            return true;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot reserve loopback port " + port + " under " + RESERVATIONS, ex);
        }
    }
}
