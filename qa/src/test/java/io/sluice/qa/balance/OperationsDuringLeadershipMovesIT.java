package io.sluice.qa.balance;

import io.sluice.qa.SharedCluster;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.RollingRestart;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WriteLoad;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 32: an operator's call never fails because the cluster moves a leadership by itself. Separate broker JVMs;
 * in each round one broker is frozen (SIGSTOP) until its leaderships moved away, then thawed, and while the
 * leaderships go home (the automatic balance, and {@code POST /actuator/rebalance} in a loop) pauses, soft pauses,
 * resumes, resets with backfill and backfill cancels run one after another with writes beside them: every one
 * answers 2xx, and the leaderships did move meanwhile.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@Execution(ExecutionMode.SAME_THREAD)
class OperationsDuringLeadershipMovesIT
{
    /** How long operations run after the thaw, while the leaderships go home. */
    private static final Duration MOVING_WINDOW = Duration.ofSeconds(10);

    @RegisterExtension
    static final SharedCluster SHARED = new SharedCluster();

    @Test
    void pausesResumesAndBackfillCancelsDuringRebalancesAreNeverRefused() throws Exception
    {
        final SluiceCluster cluster = SHARED.cluster();
        cluster.awaitLeaders();
        RollingRestart.awaitBalanced(cluster, SluiceCluster.scaled(Duration.ofSeconds(90)), "at start");

        final List<String> refused = new CopyOnWriteArrayList<>();
        final AtomicInteger operations = new AtomicInteger();
        int moved = 0;
        final List<long[]> frozen = new ArrayList<>();
        final ExecutorService pool = Executors.newSingleThreadExecutor();
        try (WriteLoad writers = new WriteLoad(cluster, "moves", 2, 1, Duration.ofMillis(20), Duration.ofMinutes(8)))
        {
            for (int brokerId = 0; brokerId < cluster.brokerCount(); brokerId++)
            {
                final long frozenAt = System.currentTimeMillis();
                cluster.suspendBroker(brokerId);
                awaitLeadershipsMovedFrom(cluster, brokerId);
                frozen.add(new long[] {frozenAt, System.currentTimeMillis()});
                cluster.resumeBroker(brokerId);
                cluster.awaitBrokerAvailable(brokerId);

                final Map<Integer, Integer> leaders = leaders(cluster);
                final AtomicBoolean window = new AtomicBoolean(true);
                final Future<?> operator = pool.submit(() -> operate(cluster, window, refused, operations));
                final long end = System.nanoTime() + MOVING_WINDOW.toNanos();
                while (System.nanoTime() - end < 0)
                {
                    final HttpAnswer rebalance = cluster.management("POST", "/actuator/rebalance", null);
                    cluster.log("rebalance during round " + brokerId + ": " + rebalance.status());
                    for (int i = 0; i < 5; i++)
                    {
                        Await.sleep(Duration.ofMillis(100));
                        final Map<Integer, Integer> now = leaders(cluster);
                        for (final Map.Entry<Integer, Integer> leader : now.entrySet())
                        {
                            if (!leader.getValue().equals(leaders.get(leader.getKey())))
                            {
                                moved++;
                            }
                        }
                        leaders.putAll(now);
                    }
                }
                window.set(false);
                operator.get(2, TimeUnit.MINUTES);
                RollingRestart.awaitBalanced(cluster, SluiceCluster.scaled(Duration.ofSeconds(60)),
                    "after round " + brokerId);
            }
            writers.stop();
            // A write sent to a frozen leader before its partition elected another fails once the election outlasts
            // the request timeout (4 s): that is a failover, not an automatic move, so such writes are reported,
            // not held against the moves. Every write sent while the leaderships moved home must succeed.
            final List<String> failedDuringFailover = new ArrayList<>();
            for (final long[] window : frozen)
            {
                failedDuringFailover.addAll(writers.failuresSentBetween(window[0], window[1]));
            }
            final List<String> failedWrites = new ArrayList<>(writers.failures());
            failedWrites.removeAll(failedDuringFailover);
            cluster.log("operations " + operations.get() + ", leadership moves seen " + moved + ", writes " +
                writers.writes() + ", failed writes " + failedWrites + ", writes sent to a frozen leader that " +
                "failed before the failover " + failedDuringFailover);
            assertThat(refused).as("operations refused while leaderships moved").isEmpty();
            assertThat(moved).as("leadership moves seen while the operations ran").isPositive();
            assertThat(operations.get()).as("operations answered").isGreaterThan(cluster.brokerCount() * 6);
            assertThat(failedWrites).as("failed writes sent outside a failover").isEmpty();
        }
        finally
        {
            pool.shutdownNow();
        }
    }

    /** Runs the operator's calls in turn while the window is open; every answer that is not 2xx is noted. */
    private static void operate(final SluiceCluster cluster, final AtomicBoolean window, final List<String> refused,
        final AtomicInteger operations)
    {
        while (window.get())
        {
            call(cluster, "POST", "/actuator/exporting/pause", refused, operations);
            call(cluster, "POST", "/actuator/exporting/resume", refused, operations);
            call(cluster, "POST", "/actuator/exporting/pause?soft=true", refused, operations);
            call(cluster, "POST", "/actuator/exporting/resume", refused, operations);
            final HttpAnswer started = call(cluster, "POST",
                "/actuator/exporters/file/resetToLatestAndBackfill?backfillTaskCount=2", refused, operations);
            final String backfillId = started.status() / 100 == 2 ? started.json().path("backfillId").asString() : null;
            if (backfillId != null)
            {
                call(cluster, "DELETE", "/actuator/backfills/" + backfillId, refused, operations);
            }
        }
    }

    private static HttpAnswer call(final SluiceCluster cluster, final String method, final String path,
        final List<String> refused, final AtomicInteger operations)
    {
        final HttpAnswer answer = cluster.management(method, path, null);
        operations.incrementAndGet();
        if (answer.status() / 100 != 2)
        {
            refused.add(method + " " + path + " -> " + answer.status() + " " + answer.body());
            cluster.log("refused: " + method + " " + path + " -> " + answer.status() + " " + answer.body());
        }
        return answer;
    }

    /** While the broker is frozen, its followers elect new leaders: every partition led, none by it. */
    private static void awaitLeadershipsMovedFrom(final SluiceCluster cluster, final int frozen)
    {
        Await.until("every partition led by a broker other than frozen broker " + frozen, SluiceCluster.FAILOVER_TIMEOUT,
            () -> leaders(cluster).values().stream().allMatch(leader -> leader >= 0 && leader != frozen));
    }

    /** Partition id to its leader as the gateway's cluster view shows it (-1: none). */
    private static Map<Integer, Integer> leaders(final SluiceCluster cluster)
    {
        final JsonNode view = cluster.client().get("/actuator/partitions").json();
        final Map<Integer, Integer> leaders = new HashMap<>();
        for (final JsonNode partition : view.path("partitions"))
        {
            leaders.put(partition.path("partitionId").asInt(), partition.path("leaderId").asInt(-1));
        }
        return leaders;
    }
}
