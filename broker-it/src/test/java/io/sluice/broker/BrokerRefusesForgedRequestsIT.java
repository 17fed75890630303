package io.sluice.broker;

import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.FileExporter;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimPhase;
import io.sluice.protocol.codecs.BackfillClaimRequestEncoder;
import io.sluice.protocol.codecs.BackfillClaimResponseDecoder;
import io.sluice.protocol.codecs.BackfillRequestEncoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.message.AdminLimits;
import io.sluice.protocol.message.AppendLimits;
import io.sluice.protocol.transport.MessageWriter;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Frames built by hand and sent straight to a broker's command port, past the gateway and its checks: each is
 * refused with an error answer and changes nothing, and the partition keeps working for the real gateway.
 * <p>
 * The tests share one cluster, each on a partition of its own (only the claims test touches the control group's
 * claims), except the one that restarts a broker, which gets a cluster of its own.
 */
class BrokerRefusesForgedRequestsIT
{
    /** The partition of the claims test: the claim requests of {@link BrokerBackfillClaimsIT} name partition 1. */
    private static final int CLAIMS_PARTITION = BrokerBackfillClaimsIT.PARTITION;
    private static final int JSON_PARTITION = 3; // its forged line claims partition 2
    private static final int LIMITS_PARTITION = 2;
    private static final int BACKFILL_PARTITION = 4;
    /**
     * The exporter the claims test claims for: a claim of {@code file} would hold up the other tests' backfill requests
     * on the shared cluster (a start without a claim is refused while another backfill of its exporter is being started).
     */
    private static final String CLAIMS_EXPORTER = "claims";

    @TempDir
    static Path sharedDataDir;

    @AutoClose
    static TestCluster shared;

    @TempDir
    Path dataDir;

    /** The cluster the running test talks to. */
    private TestCluster cluster;

    @AutoClose
    private TestCluster own;

    @BeforeAll
    static void startSharedCluster() throws Exception
    {
        shared = TestCluster.startShared(sharedDataDir, 3, 4, 3, (c) -> c.withExporters(Map.of(
            FileExporter.TYPE, new ExporterConfig(FileExporter.TYPE, FileExporter.TYPE, Map.of()),
            CLAIMS_EXPORTER, new ExporterConfig(CLAIMS_EXPORTER, FileExporter.TYPE, Map.of()))));
    }

    @BeforeEach
    void useSharedCluster()
    {
        cluster = shared;
    }

    @Test
    @Timeout(120)
    void aPauseAtLongMaxValueIsRefusedByEveryReplicaAndCannotPinThePartition() throws Exception
    {
        final int partitionId = 1;
        own = TestCluster.start(dataDir, 3, 1, 3); // restarts a broker: a cluster of its own
        cluster = own;
        cluster.awaitLeader(partitionId);

        for (final int b : cluster.distribution.replicasOf(partitionId))
        {
            final ErrorResponseDecoder refused = assertError(cluster.send(b,
                TestCluster.adminRequest(b, partitionId, AdminRequestKind.PAUSE_EXPORTING, Long.MAX_VALUE)),
                ErrorCode.INVALID_ARGUMENT);
            assertThat(refused.message()).contains("exporting version " + Long.MAX_VALUE)
                .contains("ahead of this broker's clock");
            // Just beyond the allowed skew is refused too; the limit is the broker's clock, not a magic value.
            final long beyondSkew = nowMicros() + AdminLimits.MAX_VERSION_AHEAD.toNanos() / 1000 + 60_000_000L;
            assertError(cluster.send(b, TestCluster.adminRequest(b, partitionId, AdminRequestKind.PAUSE_EXPORTING,
                beyondSkew)), ErrorCode.INVALID_ARGUMENT);
        }
        for (final int b : cluster.distribution.replicasOf(partitionId))
        {
            assertThat(cluster.brokers[b].partition(partitionId).exporting().version()).isZero();
            assertThat(cluster.brokers[b].partition(partitionId).exporting().heldState())
                .isEqualTo(ExportingState.EXPORTING);
        }

        // A version a gateway would send (its clock, a little ahead) still works, and a later resume wins over it.
        final long pauseVersion = nowMicros() + 60_000_000L;
        for (final int b : cluster.distribution.replicasOf(partitionId))
        {
            assertThat(cluster.admin(b, partitionId, AdminRequestKind.PAUSE_EXPORTING, pauseVersion).exportingState())
                .isEqualTo(ExportingState.PAUSED);
        }
        for (final int b : cluster.distribution.replicasOf(partitionId))
        {
            assertThat(cluster.admin(b, partitionId, AdminRequestKind.RESUME_EXPORTING, pauseVersion + 1)
                .exportingState()).isEqualTo(ExportingState.EXPORTING);
        }

        // The refusal holds across a restart: nothing was written that could come back.
        final int leader = cluster.awaitLeader(partitionId);
        cluster.stopBroker(leader);
        cluster.startBroker(leader);
        cluster.awaitLeader(partitionId);
        await("the restarted broker's control replica holds the resume").atMost(Duration.ofSeconds(30)).until(() ->
            cluster.brokers[leader].partition(partitionId).exporting().version() == pauseVersion + 1);
    }

    @Test
    @Timeout(120)
    void anAppendWhosePayloadIsNotJsonIsRefusedAndForgesNoExportLine() throws Exception
    {
        final int partitionId = JSON_PARTITION;
        final int leader = cluster.awaitLeader(partitionId);
        final String forged = "1}\n{\"partitionId\":2,\"position\":999999,\"key\":\"forged\",\"timestamp\":1,\"payload\":{}";

        final ErrorResponseDecoder refused = assertError(cluster.send(leader,
            TestCluster.appendRequest(partitionId, List.of("k"), List.of(forged))), ErrorCode.INVALID_ARGUMENT);
        assertThat(refused.message()).contains("record 0").contains("not valid JSON");
        // One bad record refuses the whole batch: the good one before it is not appended either.
        assertError(cluster.send(leader, TestCluster.appendRequest(partitionId, List.of("a", "b"),
            List.of("{\"ok\":true}", "{\"ok\":"))), ErrorCode.INVALID_ARGUMENT);
        assertError(cluster.send(leader, TestCluster.appendRequest(partitionId, List.of("a"), List.of("{} {}"))),
            ErrorCode.INVALID_ARGUMENT);
        assertError(cluster.send(leader, TestCluster.appendRequest(partitionId, List.of("a"), List.of(""))),
            ErrorCode.INVALID_ARGUMENT);
        assertThat(cluster.brokers[leader].partition(partitionId).state().lastPosition()).isZero();

        cluster.appendRecords(partitionId, 3, 3, "real");
        cluster.awaitExported(partitionId, 3);
        final List<String> lines = Files.readAllLines(cluster.exportFile(partitionId));
        assertThat(lines).hasSize(3).noneMatch((line) -> line.contains("forged"));
        assertThat(cluster.exported(partitionId)).extracting(TestCluster.ExportedLine::partitionId).containsOnly(partitionId);
    }

    @Test
    @Timeout(120)
    void keysAndPayloadsOverTheGatewaysLimitsAreRefused() throws Exception
    {
        final int partitionId = LIMITS_PARTITION;
        final int leader = cluster.awaitLeader(partitionId);

        final String longKey = "k".repeat(AppendLimits.MAX_KEY_BYTES + 1);
        assertThat(assertError(cluster.send(leader, TestCluster.appendRequest(partitionId, List.of(longKey),
            List.of("{}"))), ErrorCode.INVALID_ARGUMENT).message()).contains("key of " + longKey.length() + " bytes");
        final String bigPayload = "\"" + "x".repeat(AppendLimits.MAX_PAYLOAD_BYTES) + "\"";
        assertThat(assertError(cluster.send(leader, TestCluster.appendRequest(partitionId, List.of("k"),
            List.of(bigPayload))), ErrorCode.INVALID_ARGUMENT).message()).contains("payload of " + bigPayload.length());
        assertThat(cluster.brokers[leader].partition(partitionId).state().lastPosition()).isZero();

        // A key at the limit exactly is taken.
        final String maxKey = "k".repeat(AppendLimits.MAX_KEY_BYTES);
        assertThat(cluster.append(partitionId, List.of(maxKey), List.of("{}"))).isEqualTo(1L);
    }

    @Test
    @Timeout(120)
    void aBackfillWithMoreTasksThanTheGatewayAllowsIsRefusedAndRegistersNothing() throws Exception
    {
        final int partitionId = BACKFILL_PARTITION;
        final int leader = cluster.awaitLeader(partitionId);
        cluster.appendRecords(partitionId, 10, 5, "before");

        final ErrorResponseDecoder refused = assertError(cluster.send(leader,
            backfillRequest("forged", AdminLimits.MAX_BACKFILL_TASKS + 1)), ErrorCode.INVALID_ARGUMENT);
        assertThat(refused.message()).contains("1..64 tasks").contains("with 65 tasks");
        assertError(cluster.send(leader, backfillRequest("x".repeat(129), 1)), ErrorCode.INVALID_ARGUMENT);

        // A frame cut short, and a text length that runs past the frame or past what a backfill may hold.
        final ExpandableArrayBuffer frame = new ExpandableArrayBuffer(64);
        final MessageWriter valid = backfillRequest("bf-1", 1);
        valid.write(frame, 0);
        assertError(cluster.send(leader, TestCluster.bytes(frame, valid.encodedLength() - 3)), ErrorCode.MALFORMED_REQUEST);
        final int textLengthAt = MessageHeaderEncoder.ENCODED_LENGTH + BackfillRequestEncoder.BLOCK_LENGTH;
        frame.putInt(textLengthAt, 1 << 30, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertError(cluster.send(leader, TestCluster.bytes(frame, valid.encodedLength())), ErrorCode.MALFORMED_REQUEST);
        frame.putInt(textLengthAt, 1_000, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertError(cluster.send(leader, TestCluster.bytes(frame, valid.encodedLength())), ErrorCode.MALFORMED_REQUEST);
        for (final int b : cluster.distribution.replicasOf(partitionId))
        {
            assertThat(cluster.brokers[b].partition(partitionId).backfills().registry().tasks()).isEmpty();
        }
    }

    @Test
    @Timeout(120)
    void forgedBackfillClaimFramesAreRefusedAndClaimNothing() throws Exception
    {
        final int partitionId = CLAIMS_PARTITION;
        final int leader = cluster.awaitLeader(partitionId);
        final MessageWriter valid = BrokerBackfillClaimsIT.claimRequest(BackfillClaimAction.CLAIM, CLAIMS_EXPORTER, "bf-1",
            BackfillClaimPhase.NONE, "", false);
        final ExpandableArrayBuffer frame = new ExpandableArrayBuffer(128);
        final int length = valid.encodedLength();
        final int block = MessageHeaderEncoder.ENCODED_LENGTH;
        final int textLengthAt = block + BackfillClaimRequestEncoder.BLOCK_LENGTH;

        // A block shorter than the claim request's, cut short, an unknown action, phase or flag, a text running past
        // the frame or past what a backfill may hold: MALFORMED_REQUEST.
        valid.write(frame, 0);
        frame.putShort(0, (short)(BackfillClaimRequestEncoder.BLOCK_LENGTH - 1), ByteOrder.LITTLE_ENDIAN);
        assertMalformed(leader, frame, length, "a block of");
        valid.write(frame, 0);
        assertMalformed(leader, frame, length - 2, null);
        valid.write(frame, 0);
        frame.putByte(block + BackfillClaimRequestEncoder.actionEncodingOffset(), (byte)7);
        assertMalformed(leader, frame, length, "unknown backfill claim action 7");
        valid.write(frame, 0);
        frame.putByte(block + BackfillClaimRequestEncoder.expectedPhaseEncodingOffset(), (byte)9);
        assertMalformed(leader, frame, length, "unknown backfill claim phase 9");
        valid.write(frame, 0);
        frame.putByte(block + BackfillClaimRequestEncoder.emptyEncodingOffset(), (byte)2);
        assertMalformed(leader, frame, length, "empty is 2");
        valid.write(frame, 0);
        frame.putInt(textLengthAt, 1_000, ByteOrder.LITTLE_ENDIAN);
        assertMalformed(leader, frame, length, null);
        valid.write(frame, 0);
        frame.putInt(textLengthAt, 1 << 30, ByteOrder.LITTLE_ENDIAN);
        assertMalformed(leader, frame, length, "exceeds");

        // Well-formed but not a claim any apply could take: INVALID_ARGUMENT, nothing proposed.
        assertThat(assertError(cluster.send(leader, BrokerBackfillClaimsIT.claimRequest(BackfillClaimAction.CLAIM,
            CLAIMS_EXPORTER, "x".repeat(129), BackfillClaimPhase.NONE, "", false)), ErrorCode.INVALID_ARGUMENT).message())
            .contains("backfill id must be 1..128 bytes");
        assertThat(assertError(cluster.send(leader, BrokerBackfillClaimsIT.claimRequest(BackfillClaimAction.CLAIM,
            CLAIMS_EXPORTER, "bf-1", BackfillClaimPhase.STARTED, "", false)), ErrorCode.INVALID_ARGUMENT).message())
            .contains("expects a backfill and its phase, or none");
        assertError(cluster.send(leader, BrokerBackfillClaimsIT.claimRequest(BackfillClaimAction.RELEASE,
            CLAIMS_EXPORTER, "bf-1", BackfillClaimPhase.NONE, "", true)), ErrorCode.INVALID_ARGUMENT);

        // A backfill request of version 4 whose block leaves out the claim's index, or names a negative one.
        final MessageWriter start = BrokerBackfillClaimsIT.backfillRequest("bf-1", BrokerBackfillClaimsIT.NO_CLAIM);
        start.write(frame, 0);
        frame.putShort(0, (short)(BackfillRequestEncoder.BLOCK_LENGTH - 8), ByteOrder.LITTLE_ENDIAN);
        assertMalformed(leader, frame, start.encodedLength(), "a block of");
        assertThat(assertError(cluster.send(leader, BrokerBackfillClaimsIT.backfillRequest("bf-1", -5)),
            ErrorCode.INVALID_ARGUMENT).message()).contains("at least 1, was -5");

        for (int b = 0; b < 3; b++)
        {
            assertThat(cluster.brokers[b].control().state().backfillClaims().claims()).as("claims on broker %d", b).isEmpty();
            assertThat(cluster.brokers[b].partition(partitionId).backfills().registry().tasks()).isEmpty();
        }
        // The path still works for a real claim.
        final DirectBuffer claimed = cluster.send(leader, valid);
        assertThat(new MessageHeaderDecoder().wrap(claimed, 0).templateId()).isEqualTo(BackfillClaimResponseDecoder.TEMPLATE_ID);
    }

    private void assertMalformed(final int brokerId, final ExpandableArrayBuffer frame, final int length, final String says)
    {
        final ErrorResponseDecoder refused =
            assertError(cluster.send(brokerId, TestCluster.bytes(frame, length)), ErrorCode.MALFORMED_REQUEST);
        if (says != null)
        {
            assertThat(refused.message()).contains(says);
        }
    }

    private static MessageWriter backfillRequest(final String backfillId, final int tasks)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);
        final BackfillRequestEncoder encoder = new BackfillRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .partitionId(BACKFILL_PARTITION)
            .taskCount(tasks)
            .firstTaskId(0)
            .backfillId(backfillId)
            .exporterId("file");
        return TestCluster.bytes(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private static long nowMicros()
    {
        final Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
    }

    private static ErrorResponseDecoder assertError(final DirectBuffer response, final ErrorCode code)
    {
        final ErrorResponseDecoder error = TestCluster.error(response);
        assertThat(error.code()).as("error %s", error).isEqualTo(code);
        return error;
    }
}
