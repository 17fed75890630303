package io.sluice.qa.cluster;

import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A rolling restart as an operator (or a StatefulSet) does it: each broker in turn stopped by SIGTERM (controlled
 * shutdown), started again after a short pause, and the next one only once the leaderships are back on their
 * preferred brokers. Shared by the rolling-restart qa test and benchmark, so both measure the same schedule.
 */
public final class RollingRestart
{
    /** How long a stopped broker stays down before it is started again. */
    public static final Duration DOWN_FOR = Duration.ofSeconds(2);
    /**
     * The batched load under a roll, as issue 30 measured a StatefulSet update: a writer sends batches of this many
     * records, their keys spread over the partitions (a batch waits for its slowest partition) ...
     */
    public static final int BATCH_SIZE = 6;
    /** ... one batch every this long (so a batched writer puts about as many records in flight as a one-record one). */
    public static final Duration BATCH_PAUSE = Duration.ofMillis(20);

    /** One broker's stop: its exit code, how long the controlled shutdown took, and the balance after its restart. */
    public record Stop(int brokerId, int exitCode, Duration shutdown, Duration balancedAfterStart,
        Map<Integer, Integer> leadersPerBroker)
    {
    }

    private RollingRestart()
    {
    }

    /**
     * Rolls every broker; waits at most {@code balanceWithin} from each restart for the balance (the contract names no
     * time: how long it took is each {@link Stop}'s figure, and the benchmark's).
     */
    public static List<Stop> roll(final SluiceCluster cluster, final Duration balanceWithin)
    {
        final List<Stop> stops = new ArrayList<>();
        for (int brokerId = 0; brokerId < cluster.brokerCount(); brokerId++)
        {
            cluster.log(LocalTime.now() + " SIGTERM to broker " + brokerId);
            final long stopStart = System.nanoTime();
            final int exitCode = cluster.stopBroker(brokerId);
            final Duration shutdown = Duration.ofNanos(System.nanoTime() - stopStart);
            cluster.log("broker " + brokerId + " exited " + exitCode + " " + shutdown.toMillis() + " ms after SIGTERM; " +
                handoverLines(cluster, brokerId));
            Await.quietPeriod("broker " + brokerId + " stays down before its restart", DOWN_FOR);
            cluster.log(LocalTime.now() + " starting broker " + brokerId);
            final long restart = System.nanoTime();
            cluster.startBroker(brokerId);
            final Map<Integer, Integer> leaders = awaitBalanced(cluster, balanceWithin,
                "after restarting broker " + brokerId);
            final Duration balancedAfter = Duration.ofNanos(System.nanoTime() - restart);
            cluster.log(LocalTime.now() + " balanced again " + balancedAfter.toMillis() + " ms after starting broker " +
                brokerId + ": leaders per broker " + leaders);
            stops.add(new Stop(brokerId, exitCode, shutdown, balancedAfter, leaders));
        }
        return stops;
    }

    /**
     * Waits until every broker is reachable and every partition is led by its preferred broker, as the gateway's
     * cluster view shows it; returns the partitions led per broker.
     */
    public static Map<Integer, Integer> awaitBalanced(final SluiceCluster cluster, final Duration within, final String when)
    {
        return Await.value("every partition led by its preferred broker " + when, within, () ->
        {
            final JsonNode view = cluster.client().get("/actuator/partitions").json();
            for (final JsonNode partition : view.path("partitions"))
            {
                if (partition.path("leaderId").asInt(-1) != partition.path("preferredLeaderId").asInt(-2))
                {
                    return Optional.empty();
                }
            }
            final Map<Integer, Integer> leaders = new TreeMap<>();
            for (final JsonNode broker : view.path("brokers"))
            {
                if (!broker.path("reachable").asBoolean(false))
                {
                    return Optional.empty();
                }
                leaders.put(broker.path("brokerId").asInt(), broker.path("leaderOf").size());
            }
            return Optional.of(leaders);
        });
    }

    /** The last controlled-shutdown lines of a broker's log (the log is appended across restarts). */
    public static String handoverLines(final SluiceCluster cluster, final int brokerId)
    {
        final List<String> lines = new ArrayList<>();
        for (final String line : cluster.broker(brokerId).logOfLatestRun().split("\n"))
        {
            if (line.contains("controlled shutdown"))
            {
                lines.add(line.substring(Math.max(0, line.indexOf("broker " + brokerId + " controlled"))));
            }
        }
        return String.join(" | ", lines.subList(Math.max(0, lines.size() - 6), lines.size()));
    }
}
