package io.sluice.gateway;

import io.sluice.broker.Broker;
import io.sluice.testing.LoopbackPorts;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Addresses for in-JVM brokers of a gateway test: each a free command port whose Raft port (+1) is free too
 * ({@link LoopbackPorts}).
 */
public final class LoopbackBrokers
{
    private LoopbackBrokers()
    {
    }

    /** {@code sluice.cluster.brokers} for {@code brokers} brokers on 127.0.0.1. */
    public static String brokerList(final int brokers)
    {
        final List<Integer> taken = new ArrayList<>();
        for (int b = 0; b < brokers; b++)
        {
            taken.add(LoopbackPorts.freePortPair());
        }
        return String.join(",", taken.stream().map(port -> "127.0.0.1:" + port).toList());
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
