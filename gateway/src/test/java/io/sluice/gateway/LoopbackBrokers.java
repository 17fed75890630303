package io.sluice.gateway;

import io.sluice.broker.Broker;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Addresses for in-JVM brokers of a gateway test: each a free command port whose Raft port (+1) is free too. Taken
 * below the kernel's ephemeral range (32768 and up), so no outgoing connection's local port lands on a broker's port
 * while it restarts, and from a band of its own per test fork ({@code sluice.test.fork}, set by failsafe), so forks
 * running side by side never pick the same port. A port handed out once is not handed out again in this JVM.
 */
public final class LoopbackBrokers
{
    private static final int FIRST = 20_000;
    private static final int BAND = 3_000;
    private static final int BANDS = 4;
    private static final Set<Integer> HANDED_OUT = new HashSet<>();

    private LoopbackBrokers()
    {
    }

    /** {@code sluice.cluster.brokers} for {@code brokers} brokers on 127.0.0.1. */
    public static String brokerList(final int brokers) throws IOException
    {
        final List<Integer> taken = new ArrayList<>();
        for (int b = 0; b < brokers; b++)
        {
            taken.add(freePortPair());
        }
        return String.join(",", taken.stream().map(port -> "127.0.0.1:" + port).toList());
    }

    private static synchronized int freePortPair() throws IOException
    {
        final int low = FIRST + Math.floorMod(Integer.getInteger("sluice.test.fork", 0), BANDS) * BAND;
        for (int attempt = 0; attempt < 500; attempt++)
        {
            final int port = low + ThreadLocalRandom.current().nextInt(BAND - 1);
            if (HANDED_OUT.contains(port - 1) || HANDED_OUT.contains(port) || HANDED_OUT.contains(port + 1))
            {
                continue;
            }
            try (ServerSocket command = new ServerSocket(port, 1, InetAddress.getLoopbackAddress());
                ServerSocket raft = new ServerSocket(port + 1, 1, InetAddress.getLoopbackAddress()))
            {
                HANDED_OUT.add(port);
                HANDED_OUT.add(port + 1);
                return port;
            }
            catch (final IOException busy)
            {
                // taken by someone else: try another
            }
        }
        throw new IOException("no free port pair in " + low + ".." + (low + BAND));
    }

    /**
     * Teardown of a test's brokers, not a test step: they halt together instead of handing their leaderships over one
     * after the other (a controlled stop of the last brokers waits out handovers nobody can take, seconds per test).
     */
    public static void haltAll(final Collection<Broker> brokers)
    {
        final List<Thread> halts = new ArrayList<>();
        for (final Broker broker : brokers)
        {
            if (broker != null)
            {
                final Thread halt = new Thread(broker::halt, "halt-broker-" + broker.nodeId());
                halt.start();
                halts.add(halt);
            }
        }
        for (final Thread halt : halts)
        {
            try
            {
                halt.join(30_000);
            }
            catch (final InterruptedException e)
            {
                Thread.currentThread().interrupt();
            }
        }
    }
}
