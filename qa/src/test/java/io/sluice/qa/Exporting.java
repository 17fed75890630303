package io.sluice.qa;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportingControlAnswer;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.PairState;
import io.sluice.qa.cluster.SluiceCluster;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exporting as the gateway controls and reports it, and the state each case of a shared cluster starts from:
 * every broker up and every pair exporting. One copy for every qa test that pauses and resumes.
 */
public final class Exporting
{
    /** For the gateway's view to show a state, and for a pause or resume to be answered 200. */
    public static final Duration STATE_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(60));

    private Exporting()
    {
    }

    /** Every broker running (SIGCONT if stopped, started if dead), a leader per partition, each pair known to the gateway. */
    public static void everyBrokerUp(final SluiceCluster cluster)
    {
        for (int id = 0; id < cluster.brokerCount(); id++)
        {
            if (cluster.broker(id).isSuspended())
            {
                cluster.resumeBroker(id);
            }
            if (!cluster.broker(id).isAlive())
            {
                cluster.startBroker(id);
            }
        }
        cluster.awaitReady();
        cluster.awaitLeaders();
        for (int id = 0; id < cluster.brokerCount(); id++)
        {
            cluster.awaitBrokerAvailable(id);
        }
    }

    /** {@link #everyBrokerUp}, then every pair exporting, whatever the case before left paused. */
    public static void everyBrokerUpAndExporting(final SluiceCluster cluster)
    {
        everyBrokerUp(cluster);
        resumeAndAwaitExporting(cluster);
    }

    /** Resumes exporting (until a 200) and waits for the gateway to report every pair EXPORTING. */
    public static void resumeAndAwaitExporting(final SluiceCluster cluster)
    {
        until200("resume", () -> cluster.client().resume());
        awaitClusterState(cluster, "EXPORTING");
    }

    /** Calls until answered 200, as pairs of a broker just started may still fail; a timeout shows the last answer. */
    public static ExportingControlAnswer until200(final String what, final Supplier<ExportingControlAnswer> call)
    {
        return Await.value(what + " answered 200", STATE_TIMEOUT, () ->
        {
            final ExportingControlAnswer answer = call.get();
            if (answer.status() != 200)
            {
                throw new IllegalStateException(what + ": " + answer);
            }
            return Optional.of(answer);
        });
    }

    /** The gateway's view is polled from the brokers, so a state shows a moment after the call's answer. */
    public static ExportingStatus awaitClusterState(final SluiceCluster cluster, final String state)
    {
        return Await.value("the gateway reporting every pair " + state, STATE_TIMEOUT, () ->
        {
            final ExportingStatus status = cluster.client().exporting();
            return state.equals(status.state()) ? Optional.of(status) : Optional.empty();
        });
    }

    /**
     * Waits until the gateway reports {@code state} for the cluster with a leader known for every partition (right
     * after a restart or a leadership move a partition may have none for a moment), and answers each leader's exported
     * position.
     */
    public static Map<Integer, Long> awaitLeaderExportedPositions(final SluiceCluster cluster, final String state)
    {
        return Await.value("the gateway reporting every pair " + state + " and every partition's leader", STATE_TIMEOUT,
            () ->
            {
                final ExportingStatus status = cluster.client().exporting();
                return state.equals(status.state()) ?
                    leaderExportedPositions(status, cluster.partitionCount()) : Optional.empty();
            });
    }

    /** Waits for the gateway to report {@code state} for the cluster; checks every pair of the cluster is listed so. */
    public static void assertEveryPair(final SluiceCluster cluster, final String state)
    {
        final ExportingStatus status = awaitClusterState(cluster, state);
        assertThat(status.targets()).extracting(PairState::pair).containsExactlyInAnyOrderElementsOf(cluster.allPairs());
        assertThat(status.targets()).allSatisfy(pair -> assertThat(pair.state()).as("%s", pair).isEqualTo(state));
    }

    /** Waits until each partition's leader reports an acknowledged (exported) position at least the given one. */
    public static void awaitAcknowledged(final SluiceCluster cluster, final Map<Integer, Long> atLeast)
    {
        Await.until("leaders acknowledging positions " + atLeast, STATE_TIMEOUT, () ->
        {
            final ExportingStatus status = cluster.client().exporting();
            return atLeast.entrySet().stream().allMatch(entry -> status.leaderOf(entry.getKey())
                .flatMap(leader -> status.pair(leader, entry.getKey()))
                .map(pair -> pair.exportedPosition() >= entry.getValue())
                .orElse(false));
        });
    }

    /** Partition id to its leader's exported position, empty while some partition has no single leader. */
    public static Optional<Map<Integer, Long>> leaderExportedPositions(
        final ExportingStatus status, final int partitionCount)
    {
        final Map<Integer, Long> positions = new TreeMap<>();
        for (int partitionId = 1; partitionId <= partitionCount; partitionId++)
        {
            final int id = partitionId;
            final Optional<Long> position = status.leaderOf(partitionId)
                .flatMap(leader -> status.pair(leader, id))
                .map(PairState::exportedPosition);
            if (position.isEmpty())
            {
                return Optional.empty();
            }
            positions.put(partitionId, position.get());
        }
        return Optional.of(positions);
    }
}
