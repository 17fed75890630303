package io.sluice.qa.cluster;

import io.sluice.testing.LoopbackPorts;

/**
 * Hands out free loopback ports for child processes: {@link LoopbackPorts}, reserved across the machine's JVMs, so a
 * port given to one child is never given to another, nor to another build's test running beside this one.
 */
public final class PortAllocator
{
    private PortAllocator()
    {
    }

    /** One free port. */
    public static int freePort()
    {
        return LoopbackPorts.freePort();
    }

    /** A free port P whose neighbour P + 1 is free too (a broker's command and Raft ports). */
    public static int freePortPair()
    {
        return LoopbackPorts.freePortPair();
    }

    /** {@code sluice.cluster.brokers} for {@code brokers} brokers on loopback, each with a free port pair. */
    public static String loopbackBrokerList(final int brokers)
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
        return LoopbackPorts.isBindable(port);
    }
}
