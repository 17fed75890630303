package io.sluice.qa.bench;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.PairState;
import io.sluice.qa.cluster.SluiceCluster;
import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A broker stopped with SIGTERM and started again into a running cluster, timed from its process start to
 * <ol>
 *   <li>{@code listening}: its command port accepts a connection (from this JVM);</li>
 *   <li>{@code reachable}: the gateway's {@code GET /actuator/partitions} says it is reachable;</li>
 *   <li>{@code available}: every pair of it reports a known exporting state in {@code GET /actuator/exporting} (its
 *   control group replica caught up, its exporters following it);</li>
 *   <li>{@code caughtUp}: every replica of it is reachable at its partition leader's last position in
 *   {@code GET /actuator/partitions} (what was written while it was down has reached it).</li>
 * </ol>
 * Plus the Spring context's own start as the broker logs it. Shared by the startup and hosts-scale benchmarks.
 */
final class BrokerJoin
{
    private static final Pattern SPRING_STARTED = Pattern.compile("Started \\S+ in ([0-9.]+) seconds");

    /** One restart's times from the process start, in ns; the Spring context's start in s (-1: not logged). */
    record Times(long listeningNs, long reachableNs, long availableNs, long caughtUpNs, double springSeconds)
    {
    }

    private final SluiceCluster cluster;
    private final int brokerId;
    private final Duration timeout;

    BrokerJoin(final SluiceCluster cluster, final int brokerId, final Duration timeout)
    {
        this.cluster = cluster;
        this.brokerId = brokerId;
        this.timeout = timeout;
    }

    /** Stops the broker, waits until the gateway sees it down, runs {@code whileDown}, then starts and times it. */
    Times restart(final Runnable whileDown) throws IOException, InterruptedException
    {
        cluster.stopBroker(brokerId);
        awaitReachable(false);
        whileDown.run();
        final long logBefore = Files.size(cluster.broker(brokerId).logFile());
        final long startNs = System.nanoTime();
        cluster.startBroker(brokerId);
        final InetSocketAddress command = cluster.brokerCommandAddress(brokerId);
        while (!accepts(command))
        {
            deadline(startNs, "broker " + brokerId + " listening on " + command);
            Thread.sleep(5);
        }
        final long listening = System.nanoTime() - startNs;
        awaitReachable(true);
        final long reachable = System.nanoTime() - startNs;
        while (!everyPairKnown())
        {
            deadline(startNs, "every pair of broker " + brokerId + " known to the gateway");
            Thread.sleep(20);
        }
        final long available = System.nanoTime() - startNs;
        while (!everyReplicaCaughtUp())
        {
            deadline(startNs, "every replica of broker " + brokerId + " at its leader's last position");
            Thread.sleep(20);
        }
        final long caughtUp = System.nanoTime() - startNs;
        return new Times(listening, reachable, available, caughtUp, springStarted(logBefore));
    }

    private static boolean accepts(final InetSocketAddress address)
    {
        try (Socket socket = new Socket())
        {
            socket.connect(address, 200);
            return true;
        }
        catch (final IOException e)
        {
            return false;
        }
    }

    private void deadline(final long startNs, final String what)
    {
        if (System.nanoTime() - startNs > timeout.toNanos())
        {
            throw new IllegalStateException("not within " + timeout.toSeconds() + " s: " + what);
        }
    }

    private void awaitReachable(final boolean wanted) throws InterruptedException
    {
        final long startNs = System.nanoTime();
        while (true)
        {
            final HttpAnswer answer = cluster.management("GET", "/actuator/partitions", null);
            if (answer.status() == 200)
            {
                for (final JsonNode broker : answer.json().path("brokers"))
                {
                    if (broker.path("brokerId").asInt(-1) == brokerId && broker.path("reachable").asBoolean(!wanted) == wanted)
                    {
                        return;
                    }
                }
            }
            deadline(startNs, "broker " + brokerId + (wanted ? " reachable" : " unreachable") + " in /actuator/partitions");
            Thread.sleep(20);
        }
    }

    private boolean everyPairKnown()
    {
        final ExportingStatus status = cluster.client().exporting();
        for (final PartitionReplica pair : cluster.pairsOf(brokerId))
        {
            final Optional<PairState> state = status.pair(pair.brokerId(), pair.partitionId());
            if (state.isEmpty() || state.get().state() == null || "UNKNOWN".equals(state.get().state()))
            {
                return false;
            }
        }
        return true;
    }

    /** Every partition of the broker shows its replica reachable at the leader replica's last position. */
    private boolean everyReplicaCaughtUp()
    {
        final HttpAnswer answer = cluster.management("GET", "/actuator/partitions", null);
        if (answer.status() != 200)
        {
            return false;
        }
        int seen = 0;
        for (final JsonNode partition : answer.json().path("partitions"))
        {
            final int leader = partition.path("leaderId").asInt(-1);
            final Map<Integer, JsonNode> replicas = new HashMap<>();
            for (final JsonNode replica : partition.path("replicas"))
            {
                replicas.put(replica.path("brokerId").asInt(-1), replica);
            }
            final JsonNode mine = replicas.get(brokerId);
            if (mine == null)
            {
                continue;
            }
            seen++;
            final JsonNode leading = replicas.get(leader);
            if (leading == null || !mine.path("reachable").asBoolean(false) ||
                mine.path("lastPosition").asLong(-1) != leading.path("lastPosition").asLong(-2))
            {
                return false;
            }
        }
        return seen == cluster.pairsOf(brokerId).size();
    }

    /** The Spring context's start in seconds, from the broker's log after {@code offset}; -1 when not found. */
    private double springStarted(final long offset) throws IOException
    {
        final Path log = cluster.broker(brokerId).logFile();
        final String text = Files.readString(log);
        final Matcher matcher = SPRING_STARTED.matcher(text.substring((int)Math.min(offset, text.length())));
        return matcher.find() ? Double.parseDouble(matcher.group(1)) : -1;
    }
}
