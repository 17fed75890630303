package io.sluice.broker;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback port pairs (a broker's command port and its Raft port, one above) for in-JVM brokers. Taken below
 * the kernel's ephemeral range (32768 and up), so no outgoing connection's local port lands on a broker's port
 * while it restarts, and from a band of its own per test fork ({@code sluice.test.fork}, set by failsafe), so forks
 * running side by side never pick the same port. A port handed out once is not handed out again in this JVM.
 */
public final class LoopbackPorts
{
    private static final int FIRST = 20_000;
    private static final int BAND = 3_000;
    private static final int BANDS = 4;
    private static final Set<Integer> HANDED_OUT = new HashSet<>();

    private LoopbackPorts()
    {
    }

    /** A port whose next port is free too, both bindable on loopback now. */
    public static synchronized int freePair()
    {
        final int band = Math.floorMod(Integer.getInteger("sluice.test.fork", 0), BANDS);
        final int low = FIRST + band * BAND;
        for (int attempt = 0; attempt < 500; attempt++)
        {
            final int port = low + ThreadLocalRandom.current().nextInt(BAND - 1);
            if (HANDED_OUT.contains(port) || HANDED_OUT.contains(port + 1) || HANDED_OUT.contains(port - 1))
            {
                continue;
            }
            if (bindable(port) && bindable(port + 1))
            {
                HANDED_OUT.add(port);
                HANDED_OUT.add(port + 1);
                return port;
            }
        }
        throw new IllegalStateException("no free port pair in " + low + ".." + (low + BAND));
    }

    private static boolean bindable(final int port)
    {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress()))
        {
            return true;
        }
        catch (final IOException e)
        {
            return false;
        }
    }
}
