package io.sluice.qa;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportedRecord;
import io.sluice.qa.cluster.ExportingControlAnswer;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.PairState;
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

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static io.sluice.qa.Exporting.awaitAcknowledged;
import static io.sluice.qa.Exporting.awaitClusterState;
import static io.sluice.qa.Exporting.until200;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 5: pause, soft pause and resume of exporting on a cluster of separate JVMs (3 brokers, 6 partitions,
 * RF 3, so 18 pairs): the shared cluster, which serves every case; each case starts from every broker up and exporting,
 * and restarts only what it needs. The token is set, so every call here carries it (one case checks 401).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Execution(ExecutionMode.SAME_THREAD)
class ExportingControlIT
{
    private static final String TOKEN = SharedCluster.TOKEN;
    private static final Duration REQUEST_TIMEOUT = SharedCluster.REQUEST_TIMEOUT;
    private static final Duration TIMEOUT_MARGIN = Duration.ofMillis(1_500);
    private static final Duration QUIET_PERIOD = Duration.ofSeconds(3);

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
    void pauseAnswers200ListingEveryPairAsSucceeded()
    {
        final ExportingControlAnswer pause = cluster.client().pause();

        assertThat(pause.status()).as("pause: %s", pause).isEqualTo(200);
        assertThat(pause.operation()).isEqualTo("PAUSE");
        assertThat(pause.result()).isEqualTo("SUCCEEDED");
        assertThat(pause.targets()).hasSize(18);
        assertThat(pause.pairsWithOutcome("SUCCEEDED")).isEqualTo(cluster.allPairs());

        Exporting.assertEveryPair(cluster, "PAUSED");

        final ExportingControlAnswer resume = cluster.client().resume();
        assertThat(resume.status()).as("resume: %s", resume).isEqualTo(200);
        assertThat(resume.operation()).isEqualTo("RESUME");
        assertThat(resume.pairsWithOutcome("SUCCEEDED")).isEqualTo(cluster.allPairs());
    }

    @Test
    @Order(2)
    void recordsWrittenWhilePausedAreExportedOnlyAfterResume()
    {
        final List<WrittenRecord> before = Records.write(cluster, "before-pause", 60);
        Records.awaitExported(cluster, before);
        assertThat(cluster.client().pause().status()).isEqualTo(200);
        final Map<Integer, byte[]> snapshot = Records.snapshot(cluster);

        final List<WrittenRecord> whilePaused = Records.write(cluster, "while-paused", 300);
        Records.assertUnchangedFor(cluster, snapshot, QUIET_PERIOD, "after writing 300 records");
        assertThat(Records.notExported(cluster, whilePaused)).hasSize(whilePaused.size());

        assertThat(cluster.client().resume().status()).isEqualTo(200);
        Records.awaitExported(cluster, whilePaused);
        final List<WrittenRecord> all = new ArrayList<>(before);
        all.addAll(whilePaused);
        Records.assertExportedInOrderWithoutGaps(cluster, all);
    }

    @Test
    @Order(3)
    void softPauseKeepsExportingButHoldsTheAcknowledgedPositions()
    {
        Records.awaitExported(cluster, Records.write(cluster, "before-soft-pause", 60));
        final ExportingControlAnswer softPause = cluster.client().softPause();
        assertThat(softPause.status()).as("soft pause: %s", softPause).isEqualTo(200);
        assertThat(softPause.operation()).isEqualTo("SOFT_PAUSE");
        assertThat(softPause.pairsWithOutcome("SUCCEEDED")).isEqualTo(cluster.allPairs());
        // the gateway's view is polled: wait until it shows the soft pause, then its positions are the held ones
        final ExportingStatus held = awaitClusterState(cluster, "SOFT_PAUSED");

        final List<WrittenRecord> whileSoftPaused = Records.write(cluster, "while-soft-paused", 300);
        Records.awaitExported(cluster, whileSoftPaused);
        Await.quietPeriod("a soft pause must hold the acknowledged positions a while", Duration.ofSeconds(1));
        final ExportingStatus after = cluster.client().exporting();
        for (final PairState pair : held.targets())
        {
            if (pair.isLeader())
            {
                assertThat(after.pair(pair.pair().brokerId(), pair.pair().partitionId()).orElseThrow().exportedPosition())
                    .as("acknowledged position of %s under soft pause (last position now %s)", pair.pair(), after)
                    .isEqualTo(pair.exportedPosition());
            }
        }

        assertThat(cluster.client().resume().status()).isEqualTo(200);
        final Map<Integer, Long> highestWritten = Records.highestPositions(whileSoftPaused);
        awaitAcknowledged(cluster, highestWritten);
    }

    @Test
    @Order(4)
    void deadBrokerFailsExactlyItsPairsFastAndRetryingThemSucceedsOnceItIsBack()
    {
        final int dead = 1;
        cluster.killBroker(dead); // returns once the gateway shows the death, so the 503 below is the fast path
        // A pause is committed through each partition's Raft group: once the survivors lead every partition,
        // only the dead broker's own pairs can fail, and they must fail at once rather than at the deadline.
        cluster.awaitLeaders();

        final ExportingControlAnswer pause = cluster.client().pause();
        assertThat(pause.status()).as("pause with broker %d dead: %s", dead, pause).isEqualTo(503);
        assertThat(pause.http().elapsed()).as("503 well under the request timeout %s", REQUEST_TIMEOUT)
            .isLessThan(REQUEST_TIMEOUT.dividedBy(2));
        assertThat(pause.pairsWithOutcome("FAILED")).isEqualTo(cluster.pairsOf(dead));
        assertThat(pause.targets()).filteredOn(target -> target.pair().brokerId() == dead)
            .allSatisfy(target -> assertThat(target.error()).as("error of %s", target.pair()).isNotBlank());
        final Set<PartitionReplica> others = new TreeSet<>(cluster.allPairs());
        others.removeAll(cluster.pairsOf(dead));
        assertThat(pause.pairsWithOutcome("SUCCEEDED")).isEqualTo(others);

        cluster.startBroker(dead);
        cluster.awaitBrokerAvailable(dead);
        final ExportingControlAnswer retry = cluster.client().exportingControl("pause", pause.pairsWithOutcome("FAILED"));
        assertThat(retry.status()).as("retry of the failed pairs: %s", retry).isEqualTo(200);
        assertThat(retry.pairs()).isEqualTo(cluster.pairsOf(dead));
        assertThat(retry.pairsWithOutcome("SUCCEEDED")).isEqualTo(cluster.pairsOf(dead));
        awaitClusterState(cluster, "PAUSED");
    }

    @Test
    @Order(5)
    void suspendedBrokerTimesOutWithinTheRequestTimeout()
    {
        final int stopped = 2;
        cluster.suspendBroker(stopped);
        try
        {
            final ExportingControlAnswer pause = cluster.client().pause();
            assertThat(pause.status()).as("pause with broker %d SIGSTOPped: %s", stopped, pause).isEqualTo(504);
            assertThat(pause.http().elapsed()).as("504 within the request timeout plus %s", TIMEOUT_MARGIN)
                .isLessThan(REQUEST_TIMEOUT.plus(TIMEOUT_MARGIN));
            assertThat(pause.pairsWithOutcome("TIMED_OUT")).containsAll(cluster.pairsOf(stopped));
            assertThat(pause.pairsWithOutcome("FAILED")).isEmpty();
            assertThat(pause.pairs()).isEqualTo(cluster.allPairs());
        }
        finally
        {
            cluster.resumeBroker(stopped);
        }
        until200("resume after SIGCONT", () -> cluster.client().resume());
    }

    @Test
    @Order(6)
    void pauseHoldsAcrossLeaderChangesCausedByKills()
    {
        until200("pause", () -> cluster.client().pause());
        final Map<Integer, byte[]> snapshot = Records.snapshot(cluster);
        final List<WrittenRecord> written = new ArrayList<>(Records.write(cluster, "leader-moves-a", 200));

        final Map<Integer, Integer> leadersBefore = leaders(cluster.awaitLeaders());
        final int firstVictim = leadersBefore.get(1);
        cluster.killBroker(firstVictim);
        final Map<Integer, Integer> leadersAfterFirst = leaders(cluster.awaitLeaders());
        assertThat(leadersAfterFirst.values()).doesNotContain(firstVictim);
        written.addAll(Records.write(cluster, "leader-moves-b", 200));
        Records.assertUnchanged(cluster, snapshot, "after broker " + firstVictim + " was killed");
        cluster.startBroker(firstVictim);
        cluster.awaitBrokerAvailable(firstVictim);

        final int secondVictim = leaders(cluster.awaitLeaders()).values().stream()
            .filter(id -> id != firstVictim).findFirst().orElseThrow();
        cluster.killBroker(secondVictim);
        cluster.awaitLeaders();
        written.addAll(Records.write(cluster, "leader-moves-c", 200));
        cluster.startBroker(secondVictim);
        cluster.awaitBrokerAvailable(secondVictim);
        Records.assertUnchangedFor(cluster, snapshot, QUIET_PERIOD,
            "after killing brokers " + firstVictim + " and " + secondVictim);
        awaitClusterState(cluster, "PAUSED");

        until200("resume", () -> cluster.client().resume());
        Records.awaitExported(cluster, written);
        Records.assertExportedInOrderWithoutGaps(cluster, written);
    }

    @Test
    @Order(7)
    void pauseHoldsAcrossKillingAndRestartingEveryBroker()
    {
        until200("pause", () -> cluster.client().pause());
        final Map<Integer, byte[]> snapshot = Records.snapshot(cluster);
        final List<WrittenRecord> written = new ArrayList<>(Records.write(cluster, "full-restart-a", 200));

        restartEveryBroker();
        written.addAll(Records.write(cluster, "full-restart-b", 200));
        Records.assertUnchangedFor(cluster, snapshot, QUIET_PERIOD, "after every broker was killed and restarted");
        awaitClusterState(cluster, "PAUSED");

        until200("resume", () -> cluster.client().resume());
        Records.awaitExported(cluster, written);
        Records.assertExportedInOrderWithoutGaps(cluster, written);
    }

    @Test
    @Order(8)
    void pauseHoldsWhenOneReplicaLosesItsDataAndThenLeads()
    {
        final int wiped = 2;
        until200("pause", () -> cluster.client().pause());
        final Map<Integer, byte[]> snapshot = Records.snapshot(cluster);
        final List<WrittenRecord> written = new ArrayList<>(Records.write(cluster, "data-loss-a", 200));

        cluster.killBroker(wiped);
        cluster.deleteBrokerData(wiped);
        cluster.startBroker(wiped);
        cluster.awaitBrokerAvailable(wiped);
        awaitCaughtUp(wiped);
        Records.assertUnchanged(cluster, snapshot, "after broker " + wiped + " rejoined without its data");

        // Leadership goes to the survivors of a kill; alternate the victims until the wiped broker leads.
        final Set<Integer> ledByWiped = new HashSet<>();
        for (int round = 0; round < 4 && ledByWiped.isEmpty(); round++)
        {
            final int victim = round % 2;
            cluster.killBroker(victim);
            final Map<Integer, Integer> leaders = leaders(cluster.awaitLeaders());
            leaders.forEach((partitionId, leader) ->
            {
                if (leader == wiped)
                {
                    ledByWiped.add(partitionId);
                }
            });
            written.addAll(Records.write(cluster, "data-loss-round-" + round, 120));
            Records.assertUnchanged(cluster, snapshot, "round " + round + ", broker " + victim + " down, leaders " + leaders);
            cluster.startBroker(victim);
            cluster.awaitBrokerAvailable(victim);
            awaitCaughtUp(victim);
        }
        assertThat(ledByWiped).as("partitions led by broker %d after it lost its data", wiped).isNotEmpty();
        Records.assertUnchangedFor(cluster, snapshot, QUIET_PERIOD, "after broker " + wiped + " led " + ledByWiped);
        awaitClusterState(cluster, "PAUSED");

        until200("resume", () -> cluster.client().resume());
        Records.awaitExported(cluster, written);
        Records.assertExportedInOrderWithoutGaps(cluster, written);
    }

    @Test
    @Order(9)
    void restartDuringSoftPauseReExportsFromTheHeldPosition()
    {
        Records.awaitExported(cluster, Records.write(cluster, "before-soft-restart", 60));
        until200("soft pause", () -> cluster.client().softPause());
        final Map<Integer, Long> held = Exporting.awaitLeaderExportedPositions(cluster, "SOFT_PAUSED");
        final List<WrittenRecord> whileSoftPaused = Records.write(cluster, "soft-restart", 300);
        Records.awaitExported(cluster, whileSoftPaused);

        restartEveryBroker();

        final Map<Integer, Long> highestWritten = Records.highestPositions(whileSoftPaused);
        Await.until("positions above the held ones exported again after the restart", Records.EXPORT_TIMEOUT, () ->
            highestWritten.entrySet().stream().allMatch(entry ->
            {
                final Map<Long, Integer> counts = new HashMap<>();
                for (final ExportedRecord record : cluster.exportedRecords(entry.getKey()))
                {
                    counts.merge(record.position(), 1, Integer::sum);
                }
                for (long position = held.get(entry.getKey()) + 1; position <= entry.getValue(); position++)
                {
                    if (counts.getOrDefault(position, 0) < 2)
                    {
                        return false;
                    }
                }
                return true;
            }));
        awaitClusterState(cluster, "SOFT_PAUSED");
        until200("resume", () -> cluster.client().resume());
        Records.assertExportedInOrderWithoutGaps(cluster, whileSoftPaused);
    }

    @Test
    @Order(10)
    void mutatingCallsWithoutTheTokenAreRefusedAndChangeNothing()
    {
        for (final String path : List.of("/actuator/exporting/pause", "/actuator/exporting/pause?soft=true",
            "/actuator/exporting/resume"))
        {
            final HttpAnswer noToken = cluster.client().management("POST", path, null, null);
            assertThat(noToken.status()).as("POST %s without a token: %s", path, noToken).isEqualTo(401);
            assertThat(noToken.json().has("error")).as("error body: %s", noToken).isTrue();
            assertThat(noToken.json().has("message")).as("error body: %s", noToken).isTrue();
            final HttpAnswer wrongToken = cluster.client().management("POST", path, null, "not-" + TOKEN);
            assertThat(wrongToken.status()).as("POST %s with a wrong token: %s", path, wrongToken).isEqualTo(401);
        }
        Await.quietPeriod("the gateway polls its brokers: a wrong pause gets time to show", Duration.ofSeconds(2));
        final ExportingStatus status = cluster.client().exporting();
        assertThat(status.state()).as("after refused calls: %s", status).isEqualTo("EXPORTING");
        final List<WrittenRecord> written = Records.write(cluster, "after-refused", 30);
        Records.awaitExported(cluster, written);
    }

    @Test
    @Order(11)
    void delayedPauseOlderThanTheLatestResumeChangesNothing() throws Exception
    {
        until200("resume", () -> cluster.client().resume());
        try (BrokerAdminClient brokers = new BrokerAdminClient())
        {
            for (final PartitionReplica pair : cluster.allPairs())
            {
                final BrokerAdminClient.ReplicaState current =
                    brokers.topology(cluster.brokerCommandAddress(pair.brokerId()), pair.brokerId()).get(pair.partitionId());
                assertThat(current).as("broker %d reports partition %d", pair.brokerId(), pair.partitionId()).isNotNull();
                assertThat(current.state()).isEqualTo(ExportingState.EXPORTING);

                final BrokerAdminClient.AdminAnswer late = brokers.admin(cluster.brokerCommandAddress(pair.brokerId()),
                    pair.brokerId(), pair.partitionId(), AdminRequestKind.PAUSE_EXPORTING, current.version() - 1);
                assertThat(late.state()).as("%s after a pause older than its resume", pair)
                    .isEqualTo(ExportingState.EXPORTING);
                assertThat(late.version()).as("version %s holds", pair).isEqualTo(current.version());
            }
            Await.quietPeriod("the gateway polls its brokers: a wrong pause gets time to show", Duration.ofSeconds(2));
            final ExportingStatus status = cluster.client().exporting();
            assertThat(status.state()).as("after delayed pauses: %s", status).isEqualTo("EXPORTING");
            Records.awaitExported(cluster, Records.write(cluster, "after-delayed-pause", 30));

            // The same request with a newer version does pause, so the refusal above is the version's doing.
            final PartitionReplica probe = new PartitionReplica(0, 1);
            final long version = brokers.topology(cluster.brokerCommandAddress(0), 0).get(1).version();
            final BrokerAdminClient.AdminAnswer newer = brokers.admin(cluster.brokerCommandAddress(0), 0, 1,
                AdminRequestKind.PAUSE_EXPORTING, version + 1);
            assertThat(newer.state()).as("%s after a newer pause", probe).isEqualTo(ExportingState.PAUSED);
            final BrokerAdminClient.AdminAnswer undo = brokers.admin(cluster.brokerCommandAddress(0), 0, 1,
                AdminRequestKind.RESUME_EXPORTING, version + 2);
            assertThat(undo.state()).isEqualTo(ExportingState.EXPORTING);
        }
    }

    /** Waits until each of the broker's replicas has every position its partition's leader has. */
    private void awaitCaughtUp(final int brokerId)
    {
        final AtomicReference<String> lagging = new AtomicReference<>("no view yet");
        Await.until("broker " + brokerId + " caught up with every leader", SluiceCluster.FAILOVER_TIMEOUT, () ->
        {
            final ExportingStatus status = cluster.client().exporting();
            final List<String> behind = new ArrayList<>();
            for (final PartitionReplica pair : cluster.pairsOf(brokerId))
            {
                final Optional<Integer> leader = status.leaderOf(pair.partitionId());
                final PairState mine = status.pair(brokerId, pair.partitionId()).orElse(null);
                if (leader.isEmpty() || mine == null)
                {
                    behind.add("partition " + pair.partitionId() + ": no leader or no state reported");
                    continue;
                }
                final PairState leading = status.pair(leader.get(), pair.partitionId()).orElseThrow();
                if (mine.lastPosition() < leading.lastPosition())
                {
                    behind.add("partition " + pair.partitionId() + " on broker " + brokerId + " at lastPosition " +
                        mine.lastPosition() + " (state " + mine.state() + "), its leader broker " + leader.get() +
                        " at " + leading.lastPosition());
                }
            }
            lagging.set(behind.toString());
            return behind.isEmpty();
        }, () -> "still behind: " + lagging.get());
    }

    private static Map<Integer, Integer> leaders(final ExportingStatus status)
    {
        final Map<Integer, Integer> leaders = new HashMap<>();
        for (final PairState pair : status.targets())
        {
            if (pair.isLeader())
            {
                leaders.put(pair.pair().partitionId(), pair.pair().brokerId());
            }
        }
        return leaders;
    }

    /** SIGKILLs every broker, then starts them all again: a full restart, each from its own data. */
    private void restartEveryBroker()
    {
        for (int id = 0; id < cluster.brokerCount(); id++)
        {
            cluster.killBroker(id);
        }
        for (int id = 0; id < cluster.brokerCount(); id++)
        {
            cluster.startBroker(id);
        }
        cluster.awaitReady();
        cluster.awaitLeaders();
    }
}
