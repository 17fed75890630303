package io.sluice.broker;

import io.sluice.broker.exporting.ExportingView;
import io.sluice.broker.partition.PartitionState;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.ExportingState;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A follower whose data directory was deleted rejoins an idle partition (exporting paused, so the leader
 * appends nothing) under the same leader. That leader still holds the follower's old match index, and Ratis
 * answers the follower's "I have nothing" heartbeat replies with that stale index (RATIS-2523), so without
 * a new entry the follower would never receive the log.
 */
class WipedReplicaCatchUpIT
{
    @TempDir
    Path dataDir;

    @AutoClose
    private TestCluster cluster;

    @Test
    @Timeout(180)
    void wipedFollowerCatchesUpOnAnIdlePausedPartition() throws Exception
    {
        // The leader must stay put to show the catch-up causes no election; automatic balance would (rightly) move it
        // to the wiped replica once caught up when that one is the preferred broker.
        cluster = TestCluster.start(dataDir, 3, 1, 3, (c) -> c.withAutoRebalance(false));
        wipeFollowerOfIdlePartitionAndAwaitCatchUp(false);
    }

    @Test
    @Timeout(180)
    void wipedFollowerCatchesUpFromSnapshotOnAnIdlePausedPartitionWithPurgedLog() throws Exception
    {
        // Small snapshots and segments, so the leader purges its Raft log and the follower needs a snapshot.
        cluster = TestCluster.start(dataDir, 3, 1, 3, (c) -> c.withSnapshots(10, 4096).withAutoRebalance(false));
        wipeFollowerOfIdlePartitionAndAwaitCatchUp(true);
    }

    /**
     * A second fault before the wiped replica got any of the log back: the leader is down too. The survivor and the
     * empty replica are a majority of replicas but not of data, and a wiped voter may have lost a vote it already
     * cast, so Ratis does not count an empty log's vote: the partition has no leader, and accepts nothing, until
     * the stopped broker returns. Then it elects a leader, the wiped replica catches up and the pause still holds.
     */
    @Test
    @Timeout(180)
    void noLeaderFromAnEmptyVoteUntilTheStoppedLeaderReturnsThenTheWipedReplicaCatchesUp() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 1, 3);
        final int partitionId = 1;
        final int records = 60;
        final int leader = cluster.awaitLeader(partitionId);
        final int wiped = (leader + 1) % 3;
        final int survivor = (leader + 2) % 3;
        cluster.adminAll(AdminRequestKind.PAUSE_EXPORTING, 1);
        cluster.appendRecords(partitionId, records, 4, "a");
        final PartitionState survivorReplica = cluster.brokers[survivor].partition(partitionId).state();
        await("survivor " + survivor + " holds " + records + " records").atMost(Duration.ofSeconds(30))
            .until(() -> survivorReplica.lastPosition() == records);

        // The leader dies (no controlled shutdown: it hands nothing over) before the wiped replica is back, so the
        // wiped one gets nothing of the log.
        cluster.stopBroker(wiped);
        TestCluster.deleteRecursively(cluster.config(wiped).brokerDir());
        cluster.crashBroker(leader);
        cluster.startBroker(wiped);

        // Two election timeouts at the most (2 s each) with only the survivor able to win, and it cannot.
        await("no leader elected with an empty log's vote").during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(6))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> cluster.leaderOf(partitionId) == -1);

        cluster.startBroker(leader);
        final int newLeader = cluster.awaitLeader(partitionId);
        final PartitionState rejoined = cluster.brokers[wiped].partition(partitionId).state();
        await("wiped broker " + wiped + " caught up with leader " + newLeader).atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> rejoined.lastPosition() == records);
        for (int b = 0; b < 3; b++)
        {
            final PartitionState replica = cluster.brokers[b].partition(partitionId).state();
            final ExportingView exporting = cluster.brokers[b].partition(partitionId).exporting();
            // The wiped broker's control group replica catches up on its own (the same double fault held the control
            // group leaderless too); until then it obeys PAUSED whatever it holds.
            assertThat(exporting.state()).as("broker " + b).isEqualTo(ExportingState.PAUSED);
            await("broker " + b + "'s control replica holds the pause").atMost(Duration.ofSeconds(30))
                .until(() -> exporting.heldState() == ExportingState.PAUSED);
            assertThat(replica.exportedPosition()).as("broker " + b).isZero();
        }
    }

    private void wipeFollowerOfIdlePartitionAndAwaitCatchUp(final boolean awaitPurge) throws Exception
    {
        final int partitionId = 1;
        final int leader = cluster.awaitLeader(partitionId);
        final int wiped = (leader + 1) % 3;
        cluster.adminAll(AdminRequestKind.PAUSE_EXPORTING, 1);
        final int records = awaitPurge ? 300 : 60;
        // Large records in the purge case, so Raft log segments fill and close.
        cluster.appendRecords(partitionId, records, 4, "a", awaitPurge ? 2000 : 0);
        for (int b = 0; b < 3; b++)
        {
            final PartitionState replica = cluster.brokers[b].partition(partitionId).state();
            await("broker " + b + " holds " + records + " records").atMost(Duration.ofSeconds(30))
                .until(() -> replica.lastPosition() == records);
        }
        if (awaitPurge)
        {
            final Broker leaderBroker = cluster.brokers[leader];
            await("leader purged its Raft log").atMost(Duration.ofSeconds(30)).until(() ->
                leaderBroker.raftServer().getDivision(leaderBroker.partition(partitionId).group().getGroupId())
                    .getRaftLog().getStartIndex() > 1);
        }

        cluster.stopBroker(wiped);
        TestCluster.deleteRecursively(cluster.config(wiped).brokerDir());
        cluster.startBroker(wiped);
        assertThat(cluster.leaderOf(partitionId)).isEqualTo(leader);

        // Nothing is appended from here on: the partition stays idle while the replica rejoins.
        final PartitionState rejoined = cluster.brokers[wiped].partition(partitionId).state();
        await("wiped broker " + wiped + " caught up with leader " + leader).atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> rejoined.lastPosition() == records);
        final ExportingView exporting = cluster.brokers[wiped].partition(partitionId).exporting();
        assertThat(exporting.state()).isEqualTo(ExportingState.PAUSED);
        await("the wiped broker's control replica holds the pause").atMost(Duration.ofSeconds(30))
            .until(() -> exporting.heldState() == ExportingState.PAUSED);
        assertThat(rejoined.exportedPosition()).isZero();
        assertThat(rejoined.recordLog().firstPosition()).isEqualTo(1L);
        assertThat(cluster.leaderOf(partitionId)).isEqualTo(leader);
    }
}
