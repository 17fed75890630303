package io.sluice.gateway.exporting;

import io.sluice.gateway.topology.PolledClusterTopology;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;

import java.util.concurrent.TimeUnit;

/**
 * Each time a broker becomes reachable, runs the exporting path with it: {@value #ROUNDS} rounds of a version-0 pause
 * to each of its pairs ({@link ExportingControlService#warmUp}, which changes nothing). The code an operator's pause
 * runs, here and on the broker, then runs compiled instead of interpreted: a broker's own warm-up at start runs it
 * once, which loads the classes but leaves the code cold (issue 30: the first pause after a start took 425-438 ms
 * for 144 pairs against ~65 ms warm). A failure only costs the first pause its warmth.
 */
@Component
public class ExportingPathWarmUp
{
    /** Enough calls for the JIT's first tier (a few hundred) on a broker of tens of partitions. */
    static final int ROUNDS = 8;

    private static final Logger LOG = LoggerFactory.getLogger(ExportingPathWarmUp.class);

    public ExportingPathWarmUp(final ObjectProvider<PolledClusterTopology> topology, final ExportingControlService exporting)
    {
        final PolledClusterTopology polled = topology.getIfAvailable();
        if (polled != null)
        {
            polled.onReachable((brokerId) -> warm(exporting, brokerId));
        }
    }

    private static void warm(final ExportingControlService exporting, final int brokerId)
    {
        final long startNs = System.nanoTime();
        exporting.warmUp(brokerId, ROUNDS).thenAccept((answered) ->
            LOG.info("exporting path to broker {} warmed by {} rounds of a version-0 pause of its pairs (changes " +
                "nothing) in {} ms: {} answers", brokerId, ROUNDS,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs), answered));
    }
}
