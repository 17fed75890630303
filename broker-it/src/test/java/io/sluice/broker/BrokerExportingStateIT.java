package io.sluice.broker;

import io.sluice.broker.control.ControlGroup;
import io.sluice.testing.QuietPeriod;
import io.sluice.protocol.codecs.AdminRequestEncoder;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.AdminResponseDecoder;
import io.sluice.protocol.codecs.AppendRequestEncoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.TopologyResponseDecoder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Pause, soft pause and resume: replicated, versioned, kept across leader changes and restarts.
 * <p>
 * The tests that stop no broker share one cluster, each on a partition of its own ({@link #shared}); the others
 * start their own.
 */
class BrokerExportingStateIT
{
    @TempDir
    static Path sharedDataDir;

    /** For the tests that stop no broker: partition 1 and 2 for the forwarded pauses, 3 for the version 0 request. */
    @AutoClose
    static TestCluster shared;

    @TempDir
    Path dataDir;

    @AutoClose
    private TestCluster cluster;

    @BeforeAll
    static void startSharedCluster() throws Exception
    {
        shared = TestCluster.startShared(sharedDataDir, 3, 3, 3, UnaryOperator.identity());
    }

    @Test
    @Timeout(180)
    void pauseOnEveryReplicaExportsNothingAcrossLeaderChangeAndResumeExportsEverything() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 1, 3);
        final int partitionId = 1;
        cluster.awaitLeader(partitionId);
        cluster.appendRecords(partitionId, 10, 5, "before");
        cluster.awaitExported(partitionId, 10);

        for (final int b : cluster.distribution.replicasOf(partitionId))
        {
            final AdminResponseDecoder answer = cluster.admin(b, partitionId, AdminRequestKind.PAUSE_EXPORTING, 1);
            assertThat(answer.exportingState()).isEqualTo(ExportingState.PAUSED);
            assertThat(answer.version()).isEqualTo(1L);
            assertThat(answer.brokerId()).isEqualTo(b);
        }
        final int linesAtPause = cluster.exported(partitionId).size();

        cluster.appendRecords(partitionId, 20, 5, "paused");
        QuietPeriod.of(Duration.ofMillis(1500), "a paused partition exports nothing");
        assertThat(cluster.exported(partitionId)).hasSize(linesAtPause);

        final int oldLeader = cluster.awaitLeader(partitionId);
        cluster.crashBroker(oldLeader);
        cluster.appendRecords(partitionId, 10, 5, "new-leader");
        final int newLeader = awaitRaftLeader(partitionId);
        assertThat(newLeader).isNotEqualTo(oldLeader);
        QuietPeriod.of(Duration.ofSeconds(2), "the new leader exports nothing while paused");
        assertThat(cluster.exported(partitionId)).as("nothing exported by the new leader while paused")
            .hasSize(linesAtPause);
        assertThat(cluster.admin(newLeader, partitionId, AdminRequestKind.PAUSE_EXPORTING, 1).exportingState())
            .isEqualTo(ExportingState.PAUSED);

        for (final int b : cluster.distribution.replicasOf(partitionId))
        {
            if (cluster.brokers[b] != null)
            {
                final AdminResponseDecoder answer = cluster.admin(b, partitionId, AdminRequestKind.RESUME_EXPORTING, 2);
                assertThat(answer.exportingState()).isEqualTo(ExportingState.EXPORTING);
                assertThat(answer.lastPosition()).isEqualTo(40L);
            }
        }
        cluster.awaitExported(partitionId, 40);
        assertThat(cluster.exportedByPosition(partitionId)).hasSize(40);

        // A pause that arrives late (older version) cannot undo the newer resume.
        final AdminResponseDecoder late = cluster.admin(newLeader, partitionId, AdminRequestKind.PAUSE_EXPORTING, 1);
        assertThat(late.exportingState()).isEqualTo(ExportingState.EXPORTING);
        assertThat(late.version()).isEqualTo(2L);
        // Idempotent: the same resume again changes nothing.
        assertThat(cluster.admin(newLeader, partitionId, AdminRequestKind.RESUME_EXPORTING, 2).version()).isEqualTo(2L);

        // The restarted old leader learns the state from the log.
        cluster.startBroker(oldLeader);
        await("restarted broker holds the resume").atMost(Duration.ofSeconds(30)).until(() ->
            cluster.brokers[oldLeader].partition(partitionId).exporting().version() == 2);
    }

    @Test
    @Timeout(180)
    void softPauseExportsButHoldsAcknowledgedPositionsAndRestartReExportsFromThere() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 1, 3);
        final int partitionId = 1;
        final int leader = cluster.awaitLeader(partitionId);
        cluster.appendRecords(partitionId, 10, 5, "before");
        cluster.awaitExported(partitionId, 10);
        await("acknowledged 10").atMost(Duration.ofSeconds(30)).until(() ->
            cluster.brokers[leader].partition(partitionId).state().exportedPosition() == 10);

        cluster.adminAll(AdminRequestKind.SOFT_PAUSE_EXPORTING, 1);
        cluster.appendRecords(partitionId, 20, 5, "soft");
        cluster.awaitExported(partitionId, 30);
        QuietPeriod.of(Duration.ofSeconds(1), "soft pause: no acknowledged position moves");
        for (int b = 0; b < 3; b++)
        {
            final AdminResponseDecoder answer = cluster.admin(b, partitionId, AdminRequestKind.SOFT_PAUSE_EXPORTING, 1);
            assertThat(answer.exportingState()).isEqualTo(ExportingState.SOFT_PAUSED);
            assertThat(answer.exportedPosition()).as("held on broker %d", b).isEqualTo(10L);
            assertThat(answer.lastPosition()).isEqualTo(30L);
        }

        // Restart during soft pause: exporters start again from the held position.
        final int linesBefore = cluster.exported(partitionId).size();
        cluster.stopAll();
        for (int b = 0; b < 3; b++)
        {
            cluster.startBroker(b);
        }
        cluster.awaitLeader(partitionId);
        await("re-exported from the held position").atMost(Duration.ofSeconds(60)).until(() ->
            cluster.exported(partitionId).size() >= linesBefore + 20);
        final List<TestCluster.ExportedLine> lines = cluster.exported(partitionId);
        assertThat(lines.subList(linesBefore, lines.size()).get(0).position()).isEqualTo(11L);
        assertThat(cluster.brokers[0].partition(partitionId).exporting().heldState())
            .isEqualTo(ExportingState.SOFT_PAUSED);

        cluster.adminAll(AdminRequestKind.RESUME_EXPORTING, 2);
        await("resume acknowledges what was exported").atMost(Duration.ofSeconds(30)).until(() ->
            cluster.admin(0, partitionId, AdminRequestKind.RESUME_EXPORTING, 2).exportedPosition() == 30);
        final TopologyResponseDecoder topology = cluster.topology(1);
        final TopologyResponseDecoder.PartitionsDecoder partition = topology.partitions().next();
        assertThat(partition.exportingState()).isEqualTo(ExportingState.EXPORTING);
        assertThat(partition.exportingStateVersion()).isEqualTo(2L);
    }

    @ParameterizedTest(name = "leader said to be targeted too: {0}")
    @ValueSource(booleans = {false, true})
    @Timeout(120)
    void followerAskedAloneForwardsThePauseAndAnswersOnlyOnceItIsApplied(final boolean leaderTargeted) throws Exception
    {
        final TestCluster cluster = shared;
        final int partitionId = leaderTargeted ? 2 : 1;
        final int leader = cluster.awaitLeader(partitionId);
        final int follower = cluster.distribution.replicasOf(partitionId).stream().filter((b) -> b != leader).findFirst()
            .orElseThrow();
        // No request reaches the leader: the follower forwards the entry itself, at once when told the leader is
        // not asked, after its wait for the leader's entry runs out when told (wrongly) that it is.
        final DirectBuffer response = cluster.send(follower,
            TestCluster.adminRequest(follower, partitionId, AdminRequestKind.PAUSE_EXPORTING, 3, leaderTargeted));
        final AdminResponseDecoder answer = new AdminResponseDecoder().wrapAndApplyHeader(response, 0, new MessageHeaderDecoder());
        assertThat(answer.exportingState()).isEqualTo(ExportingState.PAUSED);
        assertThat(answer.version()).isEqualTo(3L);
        assertThat(cluster.brokers[follower].partition(partitionId).exporting().version()).isEqualTo(3L);
        await("pause applied on the leader").atMost(Duration.ofSeconds(30)).until(() ->
            cluster.brokers[leader].partition(partitionId).exporting().heldState() == ExportingState.PAUSED);
    }

    @Test
    @Timeout(120)
    void theWarmUpsAtStartChangeNoExportingState() throws Exception
    {
        // Each broker sends itself a version-0 pause once it serves (AdminPathWarmUp), applies exporting changes to a
        // scratch control state (ApplyPathWarmUp) and, once its control replica caught up, commits barriers: all no-ops.
        cluster = TestCluster.start(dataDir, 3, 2, 3);
        final long warmUpEntries = 3L * (1 + ControlGroup.COMMIT_WARM_UPS); // each broker's catch-up barrier and its warm-ups
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
        {
            for (final Broker broker : cluster.brokers)
            {
                assertThat(broker.control().stateMachine().lastAppliedIndex()).isGreaterThanOrEqualTo(warmUpEntries);
            }
        });
        for (int partitionId = 1; partitionId <= 2; partitionId++)
        {
            cluster.awaitLeader(partitionId);
            cluster.appendRecords(partitionId, 3, 3, "after-start");
            cluster.awaitExported(partitionId, 3);
            for (final int b : cluster.distribution.replicasOf(partitionId))
            {
                assertThat(cluster.brokers[b].partition(partitionId).exporting().version()).isZero();
                assertThat(cluster.brokers[b].partition(partitionId).exporting().heldState())
                    .isEqualTo(ExportingState.EXPORTING);
            }
        }
    }

    @Test
    @Timeout(120)
    void aRequestOfSchemaVersion0WithoutTheLeaderFlagIsHonoured() throws Exception
    {
        final TestCluster cluster = shared;
        final int partitionId = 3;
        final int leader = cluster.awaitLeader(partitionId);
        final int follower = cluster.distribution.replicasOf(partitionId).stream().filter((b) -> b != leader).findFirst()
            .orElseThrow();
        // Version 0 ends the block before leaderTargeted (the last field, one byte): the follower commits at once.
        final ExpandableArrayBuffer admin = new ExpandableArrayBuffer(64);
        TestCluster.adminRequest(follower, partitionId, AdminRequestKind.PAUSE_EXPORTING, 4, true).write(admin, 0);
        final int version0BlockLength = AdminRequestEncoder.BLOCK_LENGTH - 1;
        new MessageHeaderEncoder().wrap(admin, 0).blockLength(version0BlockLength).version(0);
        final DirectBuffer response = cluster.send(follower,
            TestCluster.bytes(admin, MessageHeaderEncoder.ENCODED_LENGTH + version0BlockLength));

        final AdminResponseDecoder answer = new AdminResponseDecoder().wrapAndApplyHeader(response, 0, new MessageHeaderDecoder());
        assertThat(answer.exportingState()).isEqualTo(ExportingState.PAUSED);
        assertThat(answer.version()).isEqualTo(4L);
    }

    @Test
    @Timeout(120)
    void pauseWithoutQuorumFailsAndChangesNothing() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 1, 3, (c) -> c.withAdminTimeout(Duration.ofSeconds(2)));
        cluster.awaitLeader(1);
        cluster.stopBroker(1);
        cluster.stopBroker(2);
        final DirectBuffer response = cluster.send(0, TestCluster.adminRequest(0, 1, AdminRequestKind.PAUSE_EXPORTING, 5));
        final ErrorResponseDecoder error = TestCluster.error(response);
        assertThat(error.code()).isIn(ErrorCode.TIMEOUT, ErrorCode.UNAVAILABLE);
        assertThat(cluster.brokers[0].partition(1).exporting().heldState()).isEqualTo(ExportingState.EXPORTING);
    }

    @Test
    @Timeout(120)
    void badRequestsGetClearErrors() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 3, 2);
        cluster.awaitLeader(1);

        // Garbage, and an admin request cut short.
        assertError(cluster.send(0, TestCluster.bytes(new org.agrona.concurrent.UnsafeBuffer(new byte[] {1, 2, 3}), 3)),
            ErrorCode.MALFORMED_REQUEST);
        final ExpandableArrayBuffer admin = new ExpandableArrayBuffer(64);
        TestCluster.adminRequest(0, 1, AdminRequestKind.PAUSE_EXPORTING, 1).write(admin, 0);
        assertError(cluster.send(0, TestCluster.bytes(admin, 12)), ErrorCode.MALFORMED_REQUEST);

        // An append whose payload length runs past the frame.
        final ExpandableArrayBuffer append = new ExpandableArrayBuffer(256);
        final AppendRequestEncoder encoder = new AppendRequestEncoder()
            .wrapAndApplyHeader(append, 0, new MessageHeaderEncoder()).partitionId(1);
        encoder.recordsCount(1).next().timestamp(1).key("k").putPayload(new byte[] {'{', '}'}, 0, 2);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
        append.putInt(length - 2 - 4, 1_000_000);
        final DirectBuffer malformedAppend = cluster.send(0, TestCluster.bytes(append, length));
        assertError(malformedAppend, ErrorCode.MALFORMED_REQUEST);
        assertThat(cluster.brokers[0].partition(1).state().lastPosition()).isZero();

        // Unknown admin kind, wrong broker, unknown partition, partition not hosted here.
        TestCluster.adminRequest(0, 1, AdminRequestKind.PAUSE_EXPORTING, 1).write(admin, 0);
        admin.putByte(MessageHeaderEncoder.ENCODED_LENGTH + AdminRequestEncoder.kindEncodingOffset(), (byte)77);
        assertError(cluster.send(0, TestCluster.bytes(admin, MessageHeaderEncoder.ENCODED_LENGTH + AdminRequestEncoder.BLOCK_LENGTH)),
            ErrorCode.MALFORMED_REQUEST);
        TestCluster.adminRequest(0, 1, AdminRequestKind.PAUSE_EXPORTING, 1).write(admin, 0);
        admin.putByte(MessageHeaderEncoder.ENCODED_LENGTH + AdminRequestEncoder.leaderTargetedEncodingOffset(), (byte)5);
        assertThat(assertError(cluster.send(0, TestCluster.bytes(admin, MessageHeaderEncoder.ENCODED_LENGTH + AdminRequestEncoder.BLOCK_LENGTH)),
            ErrorCode.MALFORMED_REQUEST).message()).contains("leaderTargeted is 5");
        assertError(cluster.send(0, TestCluster.adminRequest(1, 1, AdminRequestKind.PAUSE_EXPORTING, 1)),
            ErrorCode.NOT_MEMBER);
        assertError(cluster.send(0, TestCluster.adminRequest(0, 9, AdminRequestKind.PAUSE_EXPORTING, 1)),
            ErrorCode.PARTITION_NOT_FOUND);
        // Partition 2 is on brokers 1 and 2 only.
        assertError(cluster.send(0, TestCluster.adminRequest(0, 2, AdminRequestKind.PAUSE_EXPORTING, 1)),
            ErrorCode.NOT_MEMBER);
        assertError(cluster.send(0, TestCluster.appendRequest(9, List.of("k"), List.of("{}"))),
            ErrorCode.PARTITION_NOT_FOUND);

        // A follower redirects appends to the leader.
        final int leader = cluster.awaitLeader(1);
        final int follower = cluster.distribution.replicasOf(1).stream().filter((b) -> b != leader).findFirst().orElseThrow();
        final ErrorResponseDecoder notLeader = assertError(
            cluster.send(follower, TestCluster.appendRequest(1, List.of("k"), List.of("{}"))), ErrorCode.NOT_LEADER);
        assertThat(notLeader.leaderId()).isEqualTo(leader);
        assertThat(cluster.brokers[0].partition(1).exporting().version()).isZero();
    }

    private static ErrorResponseDecoder assertError(final DirectBuffer response, final ErrorCode code)
    {
        final ErrorResponseDecoder error = TestCluster.error(response);
        assertThat(error.code()).as("error %s", error).isEqualTo(code);
        return error;
    }

    private int awaitRaftLeader(final int partitionId)
    {
        final int[] leader = {-1};
        await("Raft leader of partition " + partitionId).atMost(Duration.ofSeconds(30)).until(() ->
        {
            for (final int b : cluster.distribution.replicasOf(partitionId))
            {
                if (cluster.brokers[b] != null &&
                    cluster.brokers[b].partition(partitionId).status().role() ==
                    io.sluice.protocol.codecs.PartitionRole.LEADER)
                {
                    leader[0] = b;
                    return true;
                }
            }
            return false;
        });
        return leader[0];
    }
}
