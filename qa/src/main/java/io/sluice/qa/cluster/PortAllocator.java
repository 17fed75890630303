package io.sluice.qa.cluster;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Hands out free loopback ports for child processes.
 * <p>
 * Ports come from {@link #LOW}..{@link #HIGH}: below Linux's ephemeral range (32768+), so an outgoing
 * connection cannot take a port while its broker is down for a restart, and away from the standalone
 * defaults (8080, 9600, 26501..26522). A port handed out once is never handed out again by this JVM.
 * Thread-safe.
 */
public final class PortAllocator
{
    static final int LOW = 27_000;
    static final int HIGH = 32_700;
    private static final int MAX_ATTEMPTS = 2_000;
    private static final Set<Integer> HANDED_OUT = new HashSet<>();

    private PortAllocator()
    {
    }

    /** One free port. */
    public static synchronized int freePort()
    {
        return allocate(1);
    }

    /** A free port P whose neighbour P + 1 is free too (a broker's command and Raft ports). */
    public static synchronized int freePortPair()
    {
        return allocate(2);
    }

    /** {@code sluice.cluster.brokers} for {@code brokers} brokers on loopback, each with a free port pair. */
    public static synchronized String loopbackBrokerList(final int brokers)
    {
        final StringBuilder list = new StringBuilder();
        for (int b = 0; b < brokers; b++)
        {
            list.append(b == 0 ? "" : ",").append("127.0.0.1:").append(freePortPair());
        }
        return list.toString();
    }

    /** Whether a port on loopback can be bound right now. */
    public static boolean isFree(final int port)
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

    private static int allocate(final int count)
    {
        final ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++)
        {
            final int first = random.nextInt(LOW, HIGH - count);
            boolean free = true;
            for (int i = 0; i < count && free; i++)
            {
                free = !HANDED_OUT.contains(first + i) && isFree(first + i);
            }
            if (free)
            {
                for (int i = 0; i < count; i++)
                {
                    HANDED_OUT.add(first + i);
                }
                return first;
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free loopback ports in " + LOW + ".." + HIGH +
            " after " + MAX_ATTEMPTS + " attempts");
    }
}
