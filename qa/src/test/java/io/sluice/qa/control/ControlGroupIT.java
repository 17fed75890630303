package io.sluice.qa.control;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.qa.Exporting;
import io.sluice.qa.Records;
import io.sluice.qa.SharedCluster;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportingControlAnswer;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.sluice.qa.Exporting.awaitClusterState;
import static io.sluice.qa.Exporting.until200;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 15: the exporting state lives in the cluster control group, one Raft group over every broker, on separate
 * JVMs (3 brokers, all three voters; 6 partitions, RF 3). Each case starts from every broker up and exporting. What
 * the pause promises (CONTRACT §3) must hold through the control group's own faults: a voter that lost its data, a
 * broker that missed a pause, the group's leader killed while a pause is in flight.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 8, unit = TimeUnit.MINUTES)
@Execution(ExecutionMode.SAME_THREAD)
class ControlGroupIT
{
    private static final Duration REQUEST_TIMEOUT = SharedCluster.REQUEST_TIMEOUT;
    private static final Duration QUIET_PERIOD = Duration.ofSeconds(3);
    private static final int KILL_ROUNDS = 5;

    @RegisterExtension
    static final SharedCluster SHARED = new SharedCluster();

    private SluiceCluster cluster;

    @BeforeAll
    void startCluster()
    {
        cluster = SHARED.cluster();
    }

    @BeforeEach
    void everyBrokerUpAndExporting()
    {
        Exporting.everyBrokerUpAndExporting(cluster);
    }

    @Test
    @Order(1)
    void aControlVoterThatLostItsDataRejoinsAndNothingIsExportedWhilePaused()
    {
        until200("pause", () -> cluster.client().pause());
        final Map<Integer, byte[]> snapshot = Records.snapshot(cluster);
        final List<WrittenRecord> written = new ArrayList<>(Records.write(cluster, "voter-wiped-a", 200));

        // The group's own leader, so the group elects another while it is gone and it rejoins as an empty follower.
        final int wiped = awaitControlLeader();
        cluster.killBroker(wiped);
        cluster.deleteBrokerData(wiped);
        written.addAll(Records.write(cluster, "voter-wiped-b", 100));
        cluster.startBroker(wiped);
        cluster.awaitBrokerAvailable(wiped);
        awaitControlCaughtUp(wiped);
        assertThat(controlLeader()).as("the control group has a leader again").isNotNegative();
        Records.assertUnchanged(cluster, snapshot, "after broker " + wiped + " rejoined without its data");

        // Automatic balance gives the wiped broker back the partitions it prefers: it leads them, and exports nothing.
        cluster.awaitPreferredLeaders();
        written.addAll(Records.write(cluster, "voter-wiped-c", 200));
        Records.assertUnchangedFor(cluster, snapshot, QUIET_PERIOD, "while broker " + wiped + " leads again");
        awaitClusterState(cluster, "PAUSED");

        until200("resume", () -> cluster.client().resume());
        Records.awaitExported(cluster, written);
        Records.assertExportedInOrderWithoutGaps(cluster, written);
    }

    @Test
    @Order(2)
    void aBrokerDownDuringA503PauseComesBackAndStaysPausedWhereThePauseCommitted()
    {
        final int down = 1;
        cluster.killBroker(down);
        cluster.awaitLeaders();

        final ExportingControlAnswer pause = cluster.client().pause();
        assertThat(pause.status()).as("pause with broker %d down: %s", down, pause).isEqualTo(503);
        assertThat(pause.pairsWithOutcome("FAILED")).isEqualTo(cluster.pairsOf(down));
        final Set<PartitionReplica> others = new TreeSet<>(cluster.allPairs());
        others.removeAll(cluster.pairsOf(down));
        assertThat(pause.pairsWithOutcome("SUCCEEDED")).isEqualTo(others);
        final Map<Integer, byte[]> snapshot = Records.snapshot(cluster);
        final List<WrittenRecord> written = new ArrayList<>(Records.write(cluster, "missed-pause-a", 200));

        cluster.startBroker(down);
        cluster.awaitBrokerAvailable(down);
        // It learns the pause from the control group, not from a retry: it leads its preferred partitions again and
        // exports none of them.
        cluster.awaitPreferredLeaders();
        written.addAll(Records.write(cluster, "missed-pause-b", 200));
        Records.assertUnchangedFor(cluster, snapshot, QUIET_PERIOD, "after broker " + down + " came back and leads");
        awaitClusterState(cluster, "PAUSED");

        until200("resume", () -> cluster.client().resume());
        Records.awaitExported(cluster, written);
        Records.assertExportedInOrderWithoutGaps(cluster, written);
    }

    @Test
    @Order(3)
    void theControlLeaderKilledDuringAPauseLeavesA200503Or504AndAfterA200NothingIsExported() throws Exception
    {
        // How long a pause takes here: the kills below land from its start to well after its answer.
        final long startNs = System.nanoTime();
        until200("timed pause", () -> cluster.client().pause());
        final long pauseMs = Math.max(10, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs));
        until200("resume", () -> cluster.client().resume());
        final List<Integer> statuses = new ArrayList<>();
        for (int round = 0; round < KILL_ROUNDS; round++)
        {
            Exporting.everyBrokerUpAndExporting(cluster);
            final List<WrittenRecord> written = new ArrayList<>(Records.write(cluster, "leader-kill-" + round + "-a", 60));
            Records.awaitExported(cluster, written);
            final int leader = awaitControlLeader();

            final CompletableFuture<ExportingControlAnswer> pausing =
                CompletableFuture.supplyAsync(() -> cluster.client().pause());
            // Kill at a different point of the operation each round: before, while and after it commits and answers.
            final long killAfterMs = round * pauseMs / 2;
            Await.quietPeriod("the kill lands " + killAfterMs + " ms into the pause", Duration.ofMillis(killAfterMs));
            cluster.killBroker(leader);
            final ExportingControlAnswer pause = pausing.get(REQUEST_TIMEOUT.multipliedBy(4).toMillis(), TimeUnit.MILLISECONDS);
            statuses.add(pause.status());
            cluster.log("round " + round + ": control leader " + leader + " killed " + killAfterMs + " ms into the pause " +
                "(one takes " + pauseMs + " ms), answered " + pause);
            assertThat(pause.status()).as("round %d: %s", round, pause).isIn(200, 503, 504);

            if (pause.status() == 200)
            {
                // The promise of a 200: nothing is exported until resume, while the group elects a new leader and the
                // killed broker comes back.
                final Map<Integer, byte[]> snapshot = Records.snapshot(cluster);
                written.addAll(Records.write(cluster, "leader-kill-" + round + "-b", 120));
                Records.assertUnchangedFor(cluster, snapshot, QUIET_PERIOD, "round " + round + " after a 200");
                cluster.startBroker(leader);
                cluster.awaitBrokerAvailable(leader);
                written.addAll(Records.write(cluster, "leader-kill-" + round + "-c", 60));
                Records.assertUnchangedFor(cluster, snapshot, QUIET_PERIOD, "round " + round + " after broker " +
                    leader + " restarted");
                awaitClusterState(cluster, "PAUSED");
            }
            else
            {
                cluster.startBroker(leader);
                cluster.awaitBrokerAvailable(leader);
            }
            until200("resume, round " + round, () -> cluster.client().resume());
            Records.awaitExported(cluster, written);
            Records.assertExportedWithoutGaps(cluster, written);
        }
        cluster.log("answers with the control leader killed during the pause: " + statuses);
    }

    /** The control group's leader as the gateway reports it, waiting (bounded) while the group elects one. */
    private int awaitControlLeader()
    {
        return Await.value("a control group leader", SluiceCluster.FAILOVER_TIMEOUT, () ->
        {
            final int leader = controlLeader();
            return leader >= 0 && cluster.isBrokerRunning(leader) ? java.util.Optional.of(leader) : java.util.Optional.empty();
        });
    }

    private int controlLeader()
    {
        return cluster.client().get("/actuator/partitions").json().path("controlLeaderId").asInt(-1);
    }

    private void awaitControlCaughtUp(final int brokerId)
    {
        Await.until("broker " + brokerId + "'s control group replica caught up", SluiceCluster.FAILOVER_TIMEOUT, () ->
        {
            for (final JsonNode broker : cluster.client().get("/actuator/partitions").json().path("brokers"))
            {
                if (broker.path("brokerId").asInt(-1) == brokerId)
                {
                    return broker.path("controlCaughtUp").asBoolean(false);
                }
            }
            return false;
        });
    }
}
