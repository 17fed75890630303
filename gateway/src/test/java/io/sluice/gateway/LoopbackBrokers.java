package io.sluice.gateway;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/** Addresses for in-JVM brokers of a gateway test: each a free command port whose Raft port (+1) is free too. */
public final class LoopbackBrokers
{
    private LoopbackBrokers()
    {
    }

    /** {@code sluice.cluster.brokers} for {@code brokers} brokers on 127.0.0.1. */
    public static String brokerList(final int brokers) throws IOException
    {
        final List<Integer> taken = new ArrayList<>();
        for (int b = 0; b < brokers; b++)
        {
            taken.add(freePortPair(taken));
        }
        return String.join(",", taken.stream().map(port -> "127.0.0.1:" + port).toList());
    }

    private static int freePortPair(final List<Integer> taken) throws IOException
    {
        for (int attempt = 0; attempt < 200; attempt++)
        {
            final int port = ThreadLocalRandom.current().nextInt(20_000, 60_000);
            if (taken.stream().anyMatch(other -> Math.abs(other - port) <= 1))
            {
                continue;
            }
            try (ServerSocket command = new ServerSocket(port); ServerSocket raft = new ServerSocket(port + 1))
            {
                return port;
            }
            catch (final IOException busy)
            {
                // taken by someone else: try another
            }
        }
        throw new IOException("no free port pair found");
    }
}
