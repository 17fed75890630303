package io.sluice.qa.balance;

import io.sluice.qa.Records;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.GatewayException;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 18, as an operator rolls a cluster during an upgrade: separate broker JVMs under a steady stream of writes,
 * each broker in turn stopped by SIGTERM (controlled shutdown: its leaderships move before it stops) and started
 * again. No write fails, no write waits a second, nothing acknowledged is lost, and the leaderships end up spread
 * over the brokers again; with automatic balance off, {@code POST /actuator/rebalance} spreads them; and a broker
 * whose peers are gone still stops within its bound.
 */
@Timeout(value = 20, unit = TimeUnit.MINUTES)
class RollingRestartTest
{
    private static final String TOKEN = "rolling-token";
    private static final int WRITERS = 3;
    /** The contract's figures: the longest a writer may wait between two acknowledged writes, and the balance wait. */
    private static final Duration MAX_WRITE_GAP = Duration.ofSeconds(1);
    private static final Duration BALANCE_WITHIN = Duration.ofSeconds(30);
    /** The broker's handover bound (BrokerConfig.DEFAULT_SHUTDOWN_TIMEOUT) plus closing its Raft server and Spring. */
    private static final Duration SHUTDOWN_BOUND = Duration.ofSeconds(15);

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    @Test
    void aRollingRestartBySigtermOfThreeBrokersWithSixPartitionsFailsNoWriteAndEndsBalanced() throws Exception
    {
        rollingRestart("six", 6);
    }

    @Test
    void aRollingRestartBySigtermOfThreeBrokersWithTwelvePartitionsFailsNoWriteAndEndsBalanced() throws Exception
    {
        rollingRestart("twelve", 12);
    }

    private void rollingRestart(final String name, final int partitions) throws Exception
    {
        final SluiceCluster cluster = RUN.cluster(name, builder -> builder.partitions(partitions).token(TOKEN));
        cluster.start();
        cluster.awaitReady();
        cluster.awaitLeaders();
        awaitBalanced(cluster, SluiceCluster.scaled(Duration.ofSeconds(90)), "before the roll");

        try (Writers writers = new Writers(cluster))
        {
            Await.sleep(Duration.ofSeconds(3));
            for (int brokerId = 0; brokerId < cluster.brokerCount(); brokerId++)
            {
                cluster.log(java.time.LocalTime.now() + " SIGTERM to broker " + brokerId);
                final long stopStart = System.nanoTime();
                final int exitCode = cluster.stopBroker(brokerId);
                final Duration shutdown = Duration.ofNanos(System.nanoTime() - stopStart);
                cluster.log("broker " + brokerId + " exited " + exitCode + " " + shutdown.toMillis() +
                    " ms after SIGTERM; " + handoverLines(cluster, brokerId));
                assertThat(exitCode).as("broker %d exit code after SIGTERM (137: it had to be killed)", brokerId)
                    .isNotEqualTo(137);
                assertThat(shutdown).as("broker %d controlled shutdown", brokerId).isLessThan(SHUTDOWN_BOUND);
                Await.sleep(Duration.ofSeconds(2));
                cluster.log(java.time.LocalTime.now() + " starting broker " + brokerId);
                final long restart = System.nanoTime();
                cluster.startBroker(brokerId);
                // What a StatefulSet's readiness wait stands for: the broker is back in sync (its leaderships came back)
                // before the next one goes. After the last one, the contract's bound applies from its start.
                final boolean last = brokerId == cluster.brokerCount() - 1;
                final Map<Integer, Integer> leaders = awaitBalanced(cluster,
                    last ? BALANCE_WITHIN : SluiceCluster.scaled(Duration.ofSeconds(90)), "after restarting broker " + brokerId);
                cluster.log(java.time.LocalTime.now() + " balanced again " +
                    Duration.ofNanos(System.nanoTime() - restart).toMillis() + " ms after starting broker " + brokerId +
                    ": leaders per broker " + leaders);
            }
            Await.sleep(Duration.ofSeconds(3));
            writers.stop();

            cluster.log(String.format("%d partitions: %d writes acknowledged, %d failed; longest gap between two " +
                    "acknowledged writes of one writer %d ms, across all writers %d ms", partitions,
                writers.acknowledged.size(), writers.failures.size(), writers.longestGapMs(), writers.longestOverallGapMs()));
            cluster.log("writes acknowledged more than 300 ms after the writer's previous one: " + writers.longGaps(300));
            assertThat(writers.failures).as("failed writes").isEmpty();
            assertThat(Duration.ofMillis(writers.longestGapMs())).as("longest gap between two acknowledged writes of one writer")
                .isLessThan(MAX_WRITE_GAP);
            final List<WrittenRecord> written = List.copyOf(writers.acknowledged);
            Records.awaitExported(cluster, written);
            Records.assertExportedInOrderWithoutGaps(cluster, written);
        }
    }

    @Test
    void afterASigkillAndRestartARebalanceCallBringsTheLeadershipsBack() throws Exception
    {
        final SluiceCluster cluster = RUN.cluster("on-request", builder -> builder.token(TOKEN)
            .property("sluice.cluster.auto-rebalance", "false"));
        cluster.start();
        cluster.awaitReady();
        cluster.awaitLeaders();
        // Mutations need the token; a typo in a parameter is refused, and neither moves anything.
        assertThat(cluster.client().management("POST", "/actuator/rebalance", null, null).status()).isEqualTo(401);
        final HttpAnswer typo = cluster.management("POST", "/actuator/rebalance?dryrun=true", null);
        assertThat(typo.status()).isEqualTo(400);
        assertThat(typo.json().path("message").asString()).contains("dryrun");

        rebalanceUntilAllOnPreferred(cluster);
        awaitBalanced(cluster, Duration.ofSeconds(10), "after the first rebalance");

        cluster.killBroker(0);
        cluster.awaitLeaders();
        cluster.startBroker(0);
        cluster.awaitBrokerAvailable(0);
        final List<WrittenRecord> written = Records.write(cluster, "after-kill", 200);
        // Automatic balance is off: broker 0 stays without leaderships until asked.
        Await.sleep(Duration.ofSeconds(8));
        assertThat(leadersPerBroker(cluster).getOrDefault(0, 0)).as("partitions led by broker 0 before the rebalance call")
            .isZero();

        final HttpAnswer answer = rebalanceUntilAllOnPreferred(cluster);
        cluster.log("rebalance after SIGKILL and restart: " + answer);
        final JsonNode body = answer.json();
        assertThat(body.path("operation").asString()).isEqualTo("REBALANCE");
        assertThat(body.path("partitions").size()).isEqualTo(cluster.partitionCount());
        for (final JsonNode partition : body.path("partitions"))
        {
            assertThat(partition.path("leaderId").asInt()).isEqualTo(partition.path("preferredBrokerId").asInt());
        }
        awaitBalanced(cluster, Duration.ofSeconds(10), "after the rebalance call");
        Records.awaitExported(cluster, written);
        Records.assertExportedWithoutGaps(cluster, written);
    }

    @Test
    void aSigtermedBrokerWhosePeersAreDownExitsWithinItsBound() throws Exception
    {
        final SluiceCluster cluster = RUN.cluster("alone", builder -> builder.token(TOKEN));
        cluster.start();
        cluster.awaitReady();
        cluster.awaitLeaders();
        awaitBalanced(cluster, SluiceCluster.scaled(Duration.ofSeconds(90)), "at start");
        cluster.killBroker(1);
        cluster.killBroker(2);

        final long start = System.nanoTime();
        final int exitCode = cluster.stopBroker(0);
        final Duration shutdown = Duration.ofNanos(System.nanoTime() - start);
        cluster.log("broker 0 alone exited " + exitCode + " " + shutdown.toMillis() + " ms after SIGTERM; " +
            handoverLines(cluster, 0));
        assertThat(exitCode).as("exit code after SIGTERM (137: it had to be killed)").isNotEqualTo(137);
        assertThat(shutdown).isLessThan(SHUTDOWN_BOUND);
        assertThat(cluster.broker(0).log()).contains("broker 0 controlled shutdown: partition 1:");
    }

    // ---------------------------------------------------------------- helpers

    /** Posts the rebalance until it answers 200 (a restarted broker may still be catching up), bounded. */
    private static HttpAnswer rebalanceUntilAllOnPreferred(final SluiceCluster cluster)
    {
        final HttpAnswer[] last = new HttpAnswer[1];
        Await.until("POST /actuator/rebalance answering 200", SluiceCluster.scaled(Duration.ofSeconds(60)), () ->
        {
            last[0] = cluster.management("POST", "/actuator/rebalance", null);
            assertThat(last[0].status()).as("rebalance answer %s", last[0]).isIn(200, 503);
            if (last[0].status() != 200)
            {
                Await.sleep(Duration.ofSeconds(1));
            }
            return last[0].status() == 200;
        });
        return last[0];
    }

    /** Broker id to the partitions it leads, as the gateway's cluster view shows them. */
    private static Map<Integer, Integer> leadersPerBroker(final SluiceCluster cluster)
    {
        final JsonNode view = cluster.client().get("/actuator/partitions").json();
        final Map<Integer, Integer> leaders = new TreeMap<>();
        for (final JsonNode broker : view.path("brokers"))
        {
            leaders.put(broker.path("brokerId").asInt(), broker.path("leaderOf").size());
        }
        return leaders;
    }

    /**
     * Waits until every broker is reachable and every partition is led by its preferred broker, as the gateway's
     * cluster view shows it; checks then that no broker leads more than one partition above an even share (the
     * contract's figure, which the preferred placement meets), and returns the leaders per broker.
     */
    private static Map<Integer, Integer> awaitBalanced(final SluiceCluster cluster, final Duration within, final String when)
    {
        final int evenShare = (cluster.partitionCount() + cluster.brokerCount() - 1) / cluster.brokerCount();
        final Map<Integer, Integer> balanced = Await.value("every partition led by its preferred broker " + when, within, () ->
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
        assertThat(balanced.values()).as("partitions led per broker %s", when).allMatch((count) -> count <= evenShare + 1);
        return balanced;
    }

    private static String handoverLines(final SluiceCluster cluster, final int brokerId)
    {
        final List<String> lines = new ArrayList<>();
        for (final String line : cluster.broker(brokerId).log().split("\n"))
        {
            if (line.contains("controlled shutdown"))
            {
                lines.add(line.substring(Math.max(0, line.indexOf("broker " + brokerId + " controlled"))));
            }
        }
        // The log is appended across restarts: this stop's lines are the last ones.
        return String.join(" | ", lines.subList(Math.max(0, lines.size() - 6), lines.size()));
    }

    /** Writers sending one record at a time, each waiting for its answer, until stopped. */
    private static final class Writers implements AutoCloseable
    {
        final ConcurrentLinkedQueue<WrittenRecord> acknowledged = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
        private final List<Future<List<Long>>> ackTimes = new ArrayList<>();
        private final List<List<Long>> done = new ArrayList<>();

        Writers(final SluiceCluster cluster)
        {
            final long deadline = System.nanoTime() + SluiceCluster.scaled(Duration.ofMinutes(15)).toNanos();
            for (int w = 0; w < WRITERS; w++)
            {
                final int writer = w;
                ackTimes.add(pool.submit(() ->
                {
                    final List<Long> times = new ArrayList<>();
                    int seq = 0;
                    while (running.get() && System.nanoTime() - deadline < 0)
                    {
                        final String key = "w" + writer + "-" + seq;
                        try
                        {
                            acknowledged.add(cluster.client().write(key, "{\"writer\":" + writer + ",\"seq\":" + seq + "}"));
                            times.add(System.currentTimeMillis());
                        }
                        catch (final GatewayException e)
                        {
                            failures.add(key + ": " + e.getMessage());
                        }
                        seq++;
                    }
                    return times;
                }));
            }
        }

        void stop() throws Exception
        {
            running.set(false);
            for (final Future<List<Long>> writer : ackTimes)
            {
                done.add(writer.get(2, TimeUnit.MINUTES));
            }
        }

        long longestGapMs()
        {
            long longest = 0;
            for (final List<Long> times : done)
            {
                for (int i = 1; i < times.size(); i++)
                {
                    longest = Math.max(longest, times.get(i) - times.get(i - 1));
                }
            }
            return longest;
        }

        /** The gaps of one writer over {@code thresholdMs}, as "ending at HH:mm:ss.SSS: N ms", to match the logs. */
        List<String> longGaps(final long thresholdMs)
        {
            final List<String> gaps = new ArrayList<>();
            for (final List<Long> times : done)
            {
                for (int i = 1; i < times.size(); i++)
                {
                    final long gap = times.get(i) - times.get(i - 1);
                    if (gap > thresholdMs)
                    {
                        gaps.add(java.time.LocalTime.ofInstant(java.time.Instant.ofEpochMilli(times.get(i)),
                            java.time.ZoneId.systemDefault()) + " after " + gap + " ms");
                    }
                }
            }
            return gaps;
        }

        long longestOverallGapMs()
        {
            final List<Long> all = new ArrayList<>();
            done.forEach(all::addAll);
            all.sort(null);
            long longest = 0;
            for (int i = 1; i < all.size(); i++)
            {
                longest = Math.max(longest, all.get(i) - all.get(i - 1));
            }
            return longest;
        }

        @Override
        public void close()
        {
            running.set(false);
            pool.shutdownNow();
        }
    }
}
