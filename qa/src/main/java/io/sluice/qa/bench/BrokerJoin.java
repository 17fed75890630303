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
import java.util.concurrent.atomic.AtomicLong;
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
    private static final Pattern START_PHASES = Pattern.compile("start: process running ([0-9]+) ms before it; (then .*)");

    /**
     * One restart's times from the process start, in ns: the command port, the gateway's view, and the Raft side (its
     * Raft port accepting; {@link RaftCatchUp}: every group's leader has heard from it since the restart and knows it
     * holds the leader's last entry). Then what the broker logged: the Spring context's start in s, and its start
     * phases' "Raft server started" and "serving" in ms since the process started (-1: not logged).
     */
    record Times(long listeningNs, long reachableNs, long availableNs, long caughtUpNs, double springSeconds,
        long raftListeningNs, long raftCaughtUpNs, long raftStartedMs, long servingMs)
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

    /**
     * Stops the broker, waits until the gateway sees it down, runs {@code whileDown}, then starts and times it: every
     * milestone is looked at every ~20 ms until all are reached (the Raft side on a thread of its own), so one reached
     * early is not timed late.
     */
    Times restart(final Runnable whileDown) throws IOException, InterruptedException
    {
        cluster.stopBroker(brokerId);
        awaitReachable(false);
        whileDown.run();
        final long logBefore = Files.size(cluster.broker(brokerId).logFile());
        final InetSocketAddress command = cluster.brokerCommandAddress(brokerId);
        final InetSocketAddress raft = cluster.distribution().raftAddress(brokerId);
        try (RaftCatchUp raftCatchUp = new RaftCatchUp(cluster.distribution(), brokerId))
        {
            final long startNs = System.nanoTime();
            cluster.startBroker(brokerId);
            // The Raft side on its own thread: a round of group-info requests takes long on a loaded machine, and must
            // not delay the looks at the command port and the gateway (nor they it).
            final AtomicLong raftListening = new AtomicLong(-1);
            final AtomicLong raftCaughtUp = new AtomicLong(-1);
            final Thread raftSide = new Thread(() ->
            {
                try
                {
                    while (raftCaughtUp.get() < 0)
                    {
                        if (raftListening.get() < 0 && accepts(raft))
                        {
                            raftListening.set(System.nanoTime() - startNs);
                        }
                        if (raftListening.get() >= 0 && raftCatchUp.caughtUp((System.nanoTime() - startNs) / 1_000_000))
                        {
                            raftCaughtUp.set(System.nanoTime() - startNs);
                        }
                        Thread.sleep(20);
                    }
                }
                catch (final InterruptedException e)
                {
                    Thread.currentThread().interrupt();
                }
            }, "startup-bench-raft-side");
            raftSide.setDaemon(true);
            raftSide.start();
            long listening = -1;
            long reachable = -1;
            long available = -1;
            long caughtUp = -1;
            try
            {
                while (listening < 0 || reachable < 0 || available < 0 || caughtUp < 0 || raftCaughtUp.get() < 0)
                {
                    deadline(startNs, "broker " + brokerId + " back (listening " + listening + ", Raft listening " +
                        raftListening.get() + ", reachable " + reachable + ", available " + available + ", caught up " +
                        caughtUp + ", Raft caught up " + raftCaughtUp.get() + ")");
                    if (listening < 0 && accepts(command))
                    {
                        listening = System.nanoTime() - startNs;
                    }
                    if (listening >= 0 && (reachable < 0 || available < 0 || caughtUp < 0))
                    {
                        final HttpAnswer partitions = cluster.management("GET", "/actuator/partitions", null);
                        if (reachable < 0 && isReachable(partitions, true))
                        {
                            reachable = System.nanoTime() - startNs;
                        }
                        if (caughtUp < 0 && everyReplicaCaughtUp(partitions))
                        {
                            caughtUp = System.nanoTime() - startNs;
                        }
                        if (reachable >= 0 && available < 0 && everyPairKnown())
                        {
                            available = System.nanoTime() - startNs;
                        }
                    }
                    Thread.sleep(20);
                }
            }
            finally
            {
                raftSide.interrupt();
                raftSide.join(10_000);
            }
            final String log = logSince(logBefore);
            return new Times(listening, reachable, available, caughtUp, springStarted(log), raftListening.get(),
                raftCaughtUp.get(), startPhase(log, "Raft server started"), startPhase(log, "serving"));
        }
    }

    /** Whether {@code address} accepts a TCP connection now. */
    static boolean accepts(final InetSocketAddress address)
    {
        try (Socket socket = new Socket())
        {
            socket.connect(address.isUnresolved() ? new InetSocketAddress(address.getHostString(), address.getPort()) :
                address, 200);
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
        while (!isReachable(cluster.management("GET", "/actuator/partitions", null), wanted))
        {
            deadline(startNs, "broker " + brokerId + (wanted ? " reachable" : " unreachable") + " in /actuator/partitions");
            Thread.sleep(20);
        }
    }

    /** Whether {@code GET /actuator/partitions}'s answer says the broker is reachable ({@code wanted}) or not. */
    private boolean isReachable(final HttpAnswer answer, final boolean wanted)
    {
        if (answer.status() == 200)
        {
            for (final JsonNode broker : answer.json().path("brokers"))
            {
                if (broker.path("brokerId").asInt(-1) == brokerId && broker.path("reachable").asBoolean(!wanted) == wanted)
                {
                    return true;
                }
            }
        }
        return false;
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
    private boolean everyReplicaCaughtUp(final HttpAnswer answer)
    {
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

    /** What the broker logged after {@code offset} of its log file (this start's lines). */
    private String logSince(final long offset) throws IOException
    {
        final String text = Files.readString(cluster.broker(brokerId).logFile());
        return text.substring((int)Math.min(offset, text.length()));
    }

    /** The Spring context's start in seconds, as logged; -1 when not found. */
    private static double springStarted(final String log)
    {
        final Matcher matcher = SPRING_STARTED.matcher(log);
        return matcher.find() ? Double.parseDouble(matcher.group(1)) : -1;
    }

    /**
     * When a step of the broker's start (its {@code StartPhases} line: "process running X ms before it; then step N ms,
     * ...") ended, in ms since the process started; -1 when not logged.
     */
    static long startPhase(final String log, final String step)
    {
        final Matcher line = START_PHASES.matcher(log);
        if (!line.find())
        {
            return -1;
        }
        final Matcher mark = Pattern.compile("(?:then |, )" + Pattern.quote(step) + "[^,]*? ([0-9]+) ms").matcher(line.group(2));
        return mark.find() ? Long.parseLong(line.group(1)) + Long.parseLong(mark.group(1)) : -1;
    }
}
