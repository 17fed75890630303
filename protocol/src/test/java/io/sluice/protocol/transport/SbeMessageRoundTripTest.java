package io.sluice.protocol.transport;

import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimOutcome;
import io.sluice.protocol.codecs.BackfillClaimPhase;
import io.sluice.protocol.codecs.BackfillClaimRequestDecoder;
import io.sluice.protocol.codecs.BackfillClaimRequestEncoder;
import io.sluice.protocol.codecs.BackfillClaimResponseDecoder;
import io.sluice.protocol.codecs.BackfillClaimResponseEncoder;
import io.sluice.protocol.codecs.BackfillClaimsRequestDecoder;
import io.sluice.protocol.codecs.BackfillClaimsRequestEncoder;
import io.sluice.protocol.codecs.BackfillClaimsResponseDecoder;
import io.sluice.protocol.codecs.BackupHoldRequestDecoder;
import io.sluice.protocol.codecs.BackupHoldRequestEncoder;
import io.sluice.protocol.codecs.BackupHoldResponseDecoder;
import io.sluice.protocol.codecs.BackupHoldResponseEncoder;
import io.sluice.protocol.codecs.SinkSnapshotsRequestDecoder;
import io.sluice.protocol.codecs.SinkSnapshotsRequestEncoder;
import io.sluice.protocol.codecs.SinkSnapshotsResponseDecoder;
import io.sluice.protocol.codecs.SinkSnapshotsResponseEncoder;
import io.sluice.protocol.codecs.BackupHoldAction;
import io.sluice.protocol.codecs.SinkSnapshotAction;
import io.sluice.protocol.codecs.BackupPartitionRequestDecoder;
import io.sluice.protocol.codecs.BackupPartitionRequestEncoder;
import io.sluice.protocol.codecs.BackupPartitionResponseDecoder;
import io.sluice.protocol.codecs.BackupPartitionResponseEncoder;
import io.sluice.protocol.codecs.BackfillClaimsResponseEncoder;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.ExportersStatusRequestDecoder;
import io.sluice.protocol.codecs.ExportersStatusRequestEncoder;
import io.sluice.protocol.codecs.ExportersStatusResponseDecoder;
import io.sluice.protocol.codecs.ExportersStatusResponseEncoder;
import io.sluice.protocol.codecs.*;
import io.sluice.protocol.message.ErrorResponseWriter;
import io.sluice.protocol.message.SbeMessages;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.sbe.MessageDecoderFlyweight;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every message of the schema, encoded, sent through the transport to a server that decodes it with the
 * generated decoder (all fields, groups and var data) and echoes it, then decoded back field by field.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SbeMessageRoundTripTest
{
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Map<Integer, String> SERVER_DECODED = new ConcurrentHashMap<>();

    private static TransportServer server;
    private static TransportClient client;
    private static InetSocketAddress address;

    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final ExpandableArrayBuffer scratch = new ExpandableArrayBuffer(256);

    @BeforeAll
    static void start()
    {
        server = TransportServer.start(new InetSocketAddress("127.0.0.1", 0), SbeMessageRoundTripTest::decodeAndEcho,
            TransportConfig.defaults());
        client = new TransportClient(TransportConfig.defaults());
        address = InetSocketAddress.createUnresolved("localhost", server.localAddress().getPort());
    }

    @AfterAll
    static void stop()
    {
        client.close();
        server.close();
    }

    /** The server side: decode every field with the generated decoder, remember the rendering, echo the bytes. */
    private static void decodeAndEcho(
        final DirectBuffer buffer, final int offset, final int length, final ResponseChannel response)
    {
        final int templateId = SbeMessages.templateIdOf(buffer, offset, length);
        final Function<Integer, MessageDecoderFlyweight> decoders = id -> switch (id)
        {
            case AdminRequestDecoder.TEMPLATE_ID -> new AdminRequestDecoder();
            case AdminResponseDecoder.TEMPLATE_ID -> new AdminResponseDecoder();
            case AppendRequestDecoder.TEMPLATE_ID -> new AppendRequestDecoder();
            case AppendResponseDecoder.TEMPLATE_ID -> new AppendResponseDecoder();
            case TopologyRequestDecoder.TEMPLATE_ID -> new TopologyRequestDecoder();
            case TopologyResponseDecoder.TEMPLATE_ID -> new TopologyResponseDecoder();
            case ErrorResponseDecoder.TEMPLATE_ID -> new ErrorResponseDecoder();
            case BackfillRequestDecoder.TEMPLATE_ID -> new BackfillRequestDecoder();
            case BackfillStatusRequestDecoder.TEMPLATE_ID -> new BackfillStatusRequestDecoder();
            case CancelBackfillRequestDecoder.TEMPLATE_ID -> new CancelBackfillRequestDecoder();
            case BackfillStatusResponseDecoder.TEMPLATE_ID -> new BackfillStatusResponseDecoder();
            case RebalanceRequestDecoder.TEMPLATE_ID -> new RebalanceRequestDecoder();
            case RebalanceResponseDecoder.TEMPLATE_ID -> new RebalanceResponseDecoder();
            case ExportersStatusRequestDecoder.TEMPLATE_ID -> new ExportersStatusRequestDecoder();
            case ExportersStatusResponseDecoder.TEMPLATE_ID -> new ExportersStatusResponseDecoder();
            case BackfillClaimRequestDecoder.TEMPLATE_ID -> new BackfillClaimRequestDecoder();
            case BackfillClaimResponseDecoder.TEMPLATE_ID -> new BackfillClaimResponseDecoder();
            case BackfillClaimsRequestDecoder.TEMPLATE_ID -> new BackfillClaimsRequestDecoder();
            case BackfillClaimsResponseDecoder.TEMPLATE_ID -> new BackfillClaimsResponseDecoder();
            case BackupPartitionRequestDecoder.TEMPLATE_ID -> new BackupPartitionRequestDecoder();
            case BackupPartitionResponseDecoder.TEMPLATE_ID -> new BackupPartitionResponseDecoder();
            case BackupHoldRequestDecoder.TEMPLATE_ID -> new BackupHoldRequestDecoder();
            case BackupHoldResponseDecoder.TEMPLATE_ID -> new BackupHoldResponseDecoder();
            case SinkSnapshotsRequestDecoder.TEMPLATE_ID -> new SinkSnapshotsRequestDecoder();
            case SinkSnapshotsResponseDecoder.TEMPLATE_ID -> new SinkSnapshotsResponseDecoder();
            default -> null;
        };
        final MessageDecoderFlyweight decoder = templateId < 0 ? null : decoders.apply(templateId);
        if (decoder == null)
        {
            response.respond(ErrorResponseWriter.of(ErrorCode.MALFORMED_REQUEST, 0, ErrorResponseWriter.NO_LEADER,
                SbeMessages.describe(buffer, offset, length)));
            return;
        }
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, offset);
        decoder.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        SERVER_DECODED.put(templateId, decoder.toString());
        final byte[] copy = new byte[length];
        buffer.getBytes(offset, copy);
        response.respond(MessageWriter.of(new org.agrona.concurrent.UnsafeBuffer(copy), 0, length));
    }

    @Test
    void adminRequestAndResponse() throws Exception
    {
        final AdminRequestEncoder request = new AdminRequestEncoder().wrapAndApplyHeader(scratch, 0, headerEncoder)
            .brokerId(2).partitionId(5).kind(AdminRequestKind.SOFT_PAUSE_EXPORTING).version(1_764_420_000_123L)
            .leaderTargeted(BooleanType.TRUE).operationScope(OperationScope.LISTED);
        request.operationPartitionsCount(2).next().partitionId(5).next().partitionId(7);
        final DirectBuffer echoedRequest = roundTrip(AdminRequestDecoder.TEMPLATE_ID, request.encodedLength());
        final AdminRequestDecoder requestDecoder =
            new AdminRequestDecoder().wrapAndApplyHeader(echoedRequest, 0, headerDecoder);
        assertThat(requestDecoder.brokerId()).isEqualTo(2);
        assertThat(requestDecoder.partitionId()).isEqualTo(5);
        assertThat(requestDecoder.kind()).isEqualTo(AdminRequestKind.SOFT_PAUSE_EXPORTING);
        assertThat(requestDecoder.version()).isEqualTo(1_764_420_000_123L);
        assertThat(requestDecoder.leaderTargeted()).isEqualTo(BooleanType.TRUE);
        assertThat(requestDecoder.operationScope()).isEqualTo(OperationScope.LISTED);
        final List<Integer> listed = new java.util.ArrayList<>();
        requestDecoder.operationPartitions().forEach((p) -> listed.add(p.partitionId()));
        assertThat(listed).containsExactly(5, 7);
        assertThat(SERVER_DECODED.get(AdminRequestDecoder.TEMPLATE_ID)).contains("SOFT_PAUSE_EXPORTING");

        final AdminResponseEncoder response = new AdminResponseEncoder().wrapAndApplyHeader(scratch, 0, headerEncoder)
            .brokerId(AdminResponseEncoder.brokerIdNullValue()).partitionId(6).exportingState(ExportingState.PAUSED)
            .version(77L).exportedPosition(AdminResponseEncoder.exportedPositionNullValue()).lastPosition(240L);
        final DirectBuffer echoedResponse = roundTrip(AdminResponseDecoder.TEMPLATE_ID, response.encodedLength());
        final AdminResponseDecoder responseDecoder =
            new AdminResponseDecoder().wrapAndApplyHeader(echoedResponse, 0, headerDecoder);
        assertThat(responseDecoder.brokerId()).isEqualTo(-1);
        assertThat(responseDecoder.partitionId()).isEqualTo(6);
        assertThat(responseDecoder.exportingState()).isEqualTo(ExportingState.PAUSED);
        assertThat(responseDecoder.version()).isEqualTo(77L);
        assertThat(responseDecoder.exportedPosition()).isEqualTo(-1L);
        assertThat(responseDecoder.lastPosition()).isEqualTo(240L);
    }

    @Test
    void appendRequestWithNullEmptyAndLargeKeysAndPayloads() throws Exception
    {
        final byte[] bigPayload = new byte[64 * 1024];
        for (int i = 0; i < bigPayload.length; i++)
        {
            bigPayload[i] = (byte)(i * 31);
        }
        final String[] keys = {"order-42", null, "", "ключ-✓"};
        final byte[][] payloads = {"{\"a\":1}".getBytes(StandardCharsets.UTF_8), new byte[0], bigPayload, new byte[0]};

        final AppendRequestEncoder request = new AppendRequestEncoder().wrapAndApplyHeader(scratch, 0, headerEncoder)
            .partitionId(3);
        final AppendRequestEncoder.RecordsEncoder records = request.recordsCount(keys.length);
        for (int i = 0; i < keys.length; i++)
        {
            records.next().timestamp(1000L + i).key(keys[i]).putPayload(payloads[i], 0, payloads[i].length);
        }
        final DirectBuffer echoed = roundTrip(AppendRequestDecoder.TEMPLATE_ID, request.encodedLength());

        final AppendRequestDecoder decoder = new AppendRequestDecoder().wrapAndApplyHeader(echoed, 0, headerDecoder);
        assertThat(decoder.partitionId()).isEqualTo(3);
        final AppendRequestDecoder.RecordsDecoder decodedRecords = decoder.records();
        assertThat(decodedRecords.count()).isEqualTo(keys.length);
        for (int i = 0; i < keys.length; i++)
        {
            decodedRecords.next();
            assertThat(decodedRecords.timestamp()).isEqualTo(1000L + i);
            assertThat(decodedRecords.key()).isEqualTo(keys[i] == null ? "" : keys[i]);
            final byte[] payload = new byte[decodedRecords.payloadLength()];
            decodedRecords.getPayload(payload, 0, payload.length);
            assertThat(payload).isEqualTo(payloads[i]);
        }
        assertThat(decoder.encodedLength()).isEqualTo(request.encodedLength());
        assertThat(SERVER_DECODED.get(AppendRequestDecoder.TEMPLATE_ID)).contains("order-42", "ключ-✓");

        final AppendResponseEncoder response = new AppendResponseEncoder().wrapAndApplyHeader(scratch, 0, headerEncoder)
            .partitionId(3).firstPosition(119L).count(4);
        final AppendResponseDecoder responseDecoder = new AppendResponseDecoder().wrapAndApplyHeader(
            roundTrip(AppendResponseDecoder.TEMPLATE_ID, response.encodedLength()), 0, headerDecoder);
        assertThat(responseDecoder.partitionId()).isEqualTo(3);
        assertThat(responseDecoder.firstPosition()).isEqualTo(119L);
        assertThat(responseDecoder.count()).isEqualTo(4);
    }

    @Test
    void topologyRequestAndResponseWithNestedGroups() throws Exception
    {
        final TopologyRequestEncoder request = new TopologyRequestEncoder().wrapAndApplyHeader(scratch, 0, headerEncoder)
            .brokerId(1);
        final TopologyRequestDecoder requestDecoder = new TopologyRequestDecoder().wrapAndApplyHeader(
            roundTrip(TopologyRequestDecoder.TEMPLATE_ID, request.encodedLength()), 0, headerDecoder);
        assertThat(requestDecoder.brokerId()).isEqualTo(1);

        final TopologyResponseEncoder response = new TopologyResponseEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder).brokerId(1);
        final TopologyResponseEncoder.PartitionsEncoder partitions = response.partitionsCount(3);
        for (int p = 1; p <= 3; p++)
        {
            partitions.next().partitionId(p).role(p == 2 ? PartitionRole.LEADER : PartitionRole.FOLLOWER).term(10L + p)
                .leaderId(p == 3 ? TopologyResponseEncoder.PartitionsEncoder.leaderIdNullValue() : 2)
                .exportingState(ExportingState.values()[p - 1]).exportingStateVersion(100L * p)
                .lastPosition(1000L * p).exportedPosition(p == 1 ? -1L : 900L * p);
            final TopologyResponseEncoder.PartitionsEncoder.ExportersEncoder exporters = partitions.exportersCount(p - 1);
            for (int e = 0; e < p - 1; e++)
            {
                exporters.next().position(50L * p + e).exporterId("exporter-" + p + "-" + e);
            }
        }
        final DirectBuffer echoed = roundTrip(TopologyResponseDecoder.TEMPLATE_ID, response.encodedLength());

        final TopologyResponseDecoder decoder = new TopologyResponseDecoder().wrapAndApplyHeader(echoed, 0, headerDecoder);
        assertThat(decoder.brokerId()).isEqualTo(1);
        final TopologyResponseDecoder.PartitionsDecoder decodedPartitions = decoder.partitions();
        assertThat(decodedPartitions.count()).isEqualTo(3);
        for (int p = 1; p <= 3; p++)
        {
            decodedPartitions.next();
            assertThat(decodedPartitions.partitionId()).isEqualTo(p);
            assertThat(decodedPartitions.role()).isEqualTo(p == 2 ? PartitionRole.LEADER : PartitionRole.FOLLOWER);
            assertThat(decodedPartitions.term()).isEqualTo(10L + p);
            assertThat(decodedPartitions.leaderId()).isEqualTo(p == 3 ? -1 : 2);
            assertThat(decodedPartitions.exportingState()).isEqualTo(ExportingState.values()[p - 1]);
            assertThat(decodedPartitions.exportingStateVersion()).isEqualTo(100L * p);
            assertThat(decodedPartitions.lastPosition()).isEqualTo(1000L * p);
            assertThat(decodedPartitions.exportedPosition()).isEqualTo(p == 1 ? -1L : 900L * p);
            final TopologyResponseDecoder.PartitionsDecoder.ExportersDecoder exporters = decodedPartitions.exporters();
            assertThat(exporters.count()).isEqualTo(p - 1);
            for (int e = 0; e < p - 1; e++)
            {
                exporters.next();
                assertThat(exporters.position()).isEqualTo(50L * p + e);
                assertThat(exporters.exporterId()).isEqualTo("exporter-" + p + "-" + e);
            }
        }
        assertThat(SERVER_DECODED.get(TopologyResponseDecoder.TEMPLATE_ID)).contains("exporter-3-1");
    }

    @Test
    void errorResponseFromTheSharedWriter() throws Exception
    {
        final ErrorResponseWriter writer = new ErrorResponseWriter()
            .set(ErrorCode.NOT_LEADER, 4, 0, "partition 4 on broker 2: not leader (leader is 0)");
        writer.write(scratch, 0);
        final ErrorResponseDecoder decoder = new ErrorResponseDecoder().wrapAndApplyHeader(
            roundTrip(ErrorResponseDecoder.TEMPLATE_ID, writer.encodedLength() - MessageHeaderEncoder.ENCODED_LENGTH),
            0, headerDecoder);
        assertThat(decoder.code()).isEqualTo(ErrorCode.NOT_LEADER);
        assertThat(decoder.partitionId()).isEqualTo(4);
        assertThat(decoder.leaderId()).isEqualTo(0);
        assertThat(decoder.message()).isEqualTo("partition 4 on broker 2: not leader (leader is 0)");
    }

    @Test
    void backfillRequestsAndStatusResponse() throws Exception
    {
        final BackfillRequestEncoder request = new BackfillRequestEncoder().wrapAndApplyHeader(scratch, 0, headerEncoder)
            .partitionId(2).taskCount(4).firstTaskId(8).backfillId("bf-1").exporterId("file");
        final BackfillRequestDecoder requestDecoder = new BackfillRequestDecoder().wrapAndApplyHeader(
            roundTrip(BackfillRequestDecoder.TEMPLATE_ID, request.encodedLength()), 0, headerDecoder);
        assertThat(requestDecoder.partitionId()).isEqualTo(2);
        assertThat(requestDecoder.taskCount()).isEqualTo(4);
        assertThat(requestDecoder.firstTaskId()).isEqualTo(8);
        assertThat(requestDecoder.backfillId()).isEqualTo("bf-1");
        assertThat(requestDecoder.exporterId()).isEqualTo("file");

        final BackfillStatusRequestEncoder status = new BackfillStatusRequestEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder).partitionId(2).backfillId("");
        final BackfillStatusRequestDecoder statusDecoder = new BackfillStatusRequestDecoder().wrapAndApplyHeader(
            roundTrip(BackfillStatusRequestDecoder.TEMPLATE_ID, status.encodedLength()), 0, headerDecoder);
        assertThat(statusDecoder.partitionId()).isEqualTo(2);
        assertThat(statusDecoder.backfillId()).isEmpty();

        final CancelBackfillRequestEncoder cancel = new CancelBackfillRequestEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder).partitionId(5).backfillId("bf-2");
        final CancelBackfillRequestDecoder cancelDecoder = new CancelBackfillRequestDecoder().wrapAndApplyHeader(
            roundTrip(CancelBackfillRequestDecoder.TEMPLATE_ID, cancel.encodedLength()), 0, headerDecoder);
        assertThat(cancelDecoder.partitionId()).isEqualTo(5);
        assertThat(cancelDecoder.backfillId()).isEqualTo("bf-2");

        final BackfillStatusResponseEncoder response = new BackfillStatusResponseEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder).partitionId(2);
        final BackfillStatusResponseEncoder.TasksEncoder tasks = response.tasksCount(2);
        tasks.next().taskId(8).state(BackfillState.RUNNING).fromPosition(119).toPosition(180).exportedUpTo(150)
            .attempts(1).createdAtMs(1_000L).updatedAtMs(2_000L).backfillId("bf-1").exporterId("file").failureReason("");
        tasks.next().taskId(9).state(BackfillState.FAILED).fromPosition(181).toPosition(240).exportedUpTo(180)
            .attempts(3).createdAtMs(1_001L).updatedAtMs(3_000L).backfillId("bf-1").exporterId("file")
            .failureReason("sink unavailable");
        final BackfillStatusResponseDecoder decoder = new BackfillStatusResponseDecoder().wrapAndApplyHeader(
            roundTrip(BackfillStatusResponseDecoder.TEMPLATE_ID, response.encodedLength()), 0, headerDecoder);
        assertThat(decoder.partitionId()).isEqualTo(2);
        final BackfillStatusResponseDecoder.TasksDecoder decodedTasks = decoder.tasks();
        assertThat(decodedTasks.count()).isEqualTo(2);
        decodedTasks.next();
        assertThat(decodedTasks.taskId()).isEqualTo(8);
        assertThat(decodedTasks.state()).isEqualTo(BackfillState.RUNNING);
        assertThat(decodedTasks.fromPosition()).isEqualTo(119);
        assertThat(decodedTasks.toPosition()).isEqualTo(180);
        assertThat(decodedTasks.exportedUpTo()).isEqualTo(150);
        assertThat(decodedTasks.attempts()).isEqualTo(1);
        assertThat(decodedTasks.createdAtMs()).isEqualTo(1_000L);
        assertThat(decodedTasks.updatedAtMs()).isEqualTo(2_000L);
        assertThat(decodedTasks.backfillId()).isEqualTo("bf-1");
        assertThat(decodedTasks.exporterId()).isEqualTo("file");
        assertThat(decodedTasks.failureReason()).isEmpty();
        decodedTasks.next();
        assertThat(decodedTasks.taskId()).isEqualTo(9);
        assertThat(decodedTasks.state()).isEqualTo(BackfillState.FAILED);
        assertThat(decodedTasks.fromPosition()).isEqualTo(181);
        assertThat(decodedTasks.toPosition()).isEqualTo(240);
        assertThat(decodedTasks.exportedUpTo()).isEqualTo(180);
        assertThat(decodedTasks.attempts()).isEqualTo(3);
        assertThat(decodedTasks.updatedAtMs()).isEqualTo(3_000L);
        // var data must be read in schema order
        assertThat(decodedTasks.backfillId()).isEqualTo("bf-1");
        assertThat(decodedTasks.exporterId()).isEqualTo("file");
        assertThat(decodedTasks.failureReason()).isEqualTo("sink unavailable");
    }

    @Test
    void rebalanceRequestAndResponse() throws Exception
    {
        final RebalanceRequestEncoder request = new RebalanceRequestEncoder().wrapAndApplyHeader(scratch, 0, headerEncoder)
            .partitionId(4).timeoutMs(4_000L);
        final RebalanceRequestDecoder requestDecoder = new RebalanceRequestDecoder().wrapAndApplyHeader(
            roundTrip(RebalanceRequestDecoder.TEMPLATE_ID, request.encodedLength()), 0, headerDecoder);
        assertThat(requestDecoder.partitionId()).isEqualTo(4);
        assertThat(requestDecoder.timeoutMs()).isEqualTo(4_000L);

        final RebalanceResponseEncoder response = new RebalanceResponseEncoder().wrapAndApplyHeader(scratch, 0, headerEncoder)
            .partitionId(4).preferredBrokerId(0).leaderId(2).reason("broker 0 is catching up");
        final RebalanceResponseDecoder decoder = new RebalanceResponseDecoder().wrapAndApplyHeader(
            roundTrip(RebalanceResponseDecoder.TEMPLATE_ID, response.encodedLength()), 0, headerDecoder);
        assertThat(decoder.partitionId()).isEqualTo(4);
        assertThat(decoder.preferredBrokerId()).isZero();
        assertThat(decoder.leaderId()).isEqualTo(2);
        assertThat(decoder.reason()).isEqualTo("broker 0 is catching up");
    }

    @Test
    void exportersStatusRequestAndResponse() throws Exception
    {
        final ExportersStatusRequestEncoder request = new ExportersStatusRequestEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder).partitionId(3);
        final ExportersStatusRequestDecoder requestDecoder = new ExportersStatusRequestDecoder().wrapAndApplyHeader(
            roundTrip(ExportersStatusRequestDecoder.TEMPLATE_ID, request.encodedLength()), 0, headerDecoder);
        assertThat(requestDecoder.partitionId()).isEqualTo(3);

        final ExportersStatusResponseEncoder response = new ExportersStatusResponseEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder)
            .partitionId(3).exportingState(ExportingState.SOFT_PAUSED).lastPosition(240L);
        response.exportersCount(1).next()
            .position(118L).retrying(BooleanType.TRUE).failures(7L).deadLetters(2L).sinkWrites(40L).sinkWriteNanos(9_000L)
            .exporterId("search").exporterType("opensearch").lastError("HTTP 503 from 127.0.0.1:9200");
        final ExportersStatusResponseDecoder decoder = new ExportersStatusResponseDecoder().wrapAndApplyHeader(
            roundTrip(ExportersStatusResponseDecoder.TEMPLATE_ID, response.encodedLength()), 0, headerDecoder);
        assertThat(decoder.partitionId()).isEqualTo(3);
        assertThat(decoder.exportingState()).isEqualTo(ExportingState.SOFT_PAUSED);
        assertThat(decoder.lastPosition()).isEqualTo(240L);
        final ExportersStatusResponseDecoder.ExportersDecoder exporters = decoder.exporters();
        assertThat(exporters.count()).isEqualTo(1);
        exporters.next();
        assertThat(exporters.position()).isEqualTo(118L);
        assertThat(exporters.retrying()).isEqualTo(BooleanType.TRUE);
        assertThat(exporters.failures()).isEqualTo(7L);
        assertThat(exporters.deadLetters()).isEqualTo(2L);
        assertThat(exporters.sinkWrites()).isEqualTo(40L);
        assertThat(exporters.sinkWriteNanos()).isEqualTo(9_000L);
        // var data must be read in schema order
        assertThat(exporters.exporterId()).isEqualTo("search");
        assertThat(exporters.exporterType()).isEqualTo("opensearch");
        assertThat(exporters.lastError()).isEqualTo("HTTP 503 from 127.0.0.1:9200");
    }

    @Test
    void backfillClaimRequestAndResponse() throws Exception
    {
        final BackfillClaimRequestEncoder request = new BackfillClaimRequestEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder)
            .action(BackfillClaimAction.CLAIM).expectedPhase(BackfillClaimPhase.STARTED).empty(BooleanType.FALSE)
            .exporterId("search").backfillId("bf-2").expectedBackfillId("bf-1");
        final BackfillClaimRequestDecoder requestDecoder = new BackfillClaimRequestDecoder().wrapAndApplyHeader(
            roundTrip(BackfillClaimRequestDecoder.TEMPLATE_ID, request.encodedLength()), 0, headerDecoder);
        assertThat(requestDecoder.action()).isEqualTo(BackfillClaimAction.CLAIM);
        assertThat(requestDecoder.expectedPhase()).isEqualTo(BackfillClaimPhase.STARTED);
        assertThat(requestDecoder.empty()).isEqualTo(BooleanType.FALSE);
        assertThat(requestDecoder.exporterId()).isEqualTo("search");
        assertThat(requestDecoder.backfillId()).isEqualTo("bf-2");
        assertThat(requestDecoder.expectedBackfillId()).isEqualTo("bf-1");

        final BackfillClaimResponseEncoder response = new BackfillClaimResponseEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder)
            .outcome(BackfillClaimOutcome.CONFLICT).claimIndex(41L).heldPhase(BackfillClaimPhase.STARTING)
            .heldClaimedAtMs(1_764_420_000_000L).heldBackfillId("bf-3").reason("backfill bf-3 holds the claim");
        final BackfillClaimResponseDecoder decoder = new BackfillClaimResponseDecoder().wrapAndApplyHeader(
            roundTrip(BackfillClaimResponseDecoder.TEMPLATE_ID, response.encodedLength()), 0, headerDecoder);
        assertThat(decoder.outcome()).isEqualTo(BackfillClaimOutcome.CONFLICT);
        assertThat(decoder.claimIndex()).isEqualTo(41L);
        assertThat(decoder.heldPhase()).isEqualTo(BackfillClaimPhase.STARTING);
        assertThat(decoder.heldClaimedAtMs()).isEqualTo(1_764_420_000_000L);
        assertThat(decoder.heldBackfillId()).isEqualTo("bf-3");
        assertThat(decoder.reason()).isEqualTo("backfill bf-3 holds the claim");
    }

    @Test
    void backfillClaimsRequestAndResponseWithBothGroups() throws Exception
    {
        final BackfillClaimsRequestEncoder request = new BackfillClaimsRequestEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder).brokerId(BackfillClaimsRequestEncoder.brokerIdNullValue());
        final BackfillClaimsRequestDecoder requestDecoder = new BackfillClaimsRequestDecoder().wrapAndApplyHeader(
            roundTrip(BackfillClaimsRequestDecoder.TEMPLATE_ID, request.encodedLength()), 0, headerDecoder);
        assertThat(requestDecoder.brokerId()).isEqualTo(BackfillClaimsRequestDecoder.brokerIdNullValue());

        final BackfillClaimsResponseEncoder response = new BackfillClaimsResponseEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder).nowMs(5_000L).appliedIndex(77L);
        response.claimsCount(1).next().phase(BackfillClaimPhase.STARTING).claimedAtMs(4_000L).releasableAtMs(64_000L)
            .claimIndex(70L).exporterId("file").backfillId("bf-9");
        response.emptyBackfillsCount(1).next().createdAtMs(3_000L).backfillId("bf-8").exporterId("search");
        final BackfillClaimsResponseDecoder decoder = new BackfillClaimsResponseDecoder().wrapAndApplyHeader(
            roundTrip(BackfillClaimsResponseDecoder.TEMPLATE_ID, response.encodedLength()), 0, headerDecoder);
        assertThat(decoder.nowMs()).isEqualTo(5_000L);
        assertThat(decoder.appliedIndex()).isEqualTo(77L);
        final BackfillClaimsResponseDecoder.ClaimsDecoder claims = decoder.claims();
        assertThat(claims.count()).isEqualTo(1);
        claims.next();
        assertThat(claims.phase()).isEqualTo(BackfillClaimPhase.STARTING);
        assertThat(claims.claimedAtMs()).isEqualTo(4_000L);
        assertThat(claims.releasableAtMs()).isEqualTo(64_000L);
        assertThat(claims.claimIndex()).isEqualTo(70L);
        assertThat(claims.exporterId()).isEqualTo("file");
        assertThat(claims.backfillId()).isEqualTo("bf-9");
        final BackfillClaimsResponseDecoder.EmptyBackfillsDecoder empty = decoder.emptyBackfills();
        assertThat(empty.count()).isEqualTo(1);
        empty.next();
        assertThat(empty.createdAtMs()).isEqualTo(3_000L);
        assertThat(empty.backfillId()).isEqualTo("bf-8");
        assertThat(empty.exporterId()).isEqualTo("search");
    }

    @Test
    void garbageGetsMalformedRequestAnswer() throws Exception
    {
        final byte[] garbage = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
        final DirectBuffer answer = client.send(address,
            MessageWriter.of(new org.agrona.concurrent.UnsafeBuffer(garbage), 0, garbage.length), TIMEOUT)
            .get(20, TimeUnit.SECONDS);
        final ErrorResponseDecoder decoder = new ErrorResponseDecoder().wrapAndApplyHeader(answer, 0, headerDecoder);
        assertThat(headerDecoder.templateId()).isEqualTo(ErrorResponseDecoder.TEMPLATE_ID);
        assertThat(decoder.code()).isEqualTo(ErrorCode.MALFORMED_REQUEST);
        assertThat(decoder.message()).contains("not a Sluice message");
    }

    @Test
    void backupPartitionRequestAndResponseWithExporterPositions() throws Exception
    {
        final BackupPartitionRequestEncoder request = new BackupPartitionRequestEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder).partitionId(4).backupId(1_764_770_000_000L);
        final BackupPartitionRequestDecoder requestDecoder = new BackupPartitionRequestDecoder().wrapAndApplyHeader(
            roundTrip(BackupPartitionRequestDecoder.TEMPLATE_ID, request.encodedLength()), 0, headerDecoder);
        assertThat(requestDecoder.partitionId()).isEqualTo(4);
        assertThat(requestDecoder.backupId()).isEqualTo(1_764_770_000_000L);

        final BackupPartitionResponseEncoder response = new BackupPartitionResponseEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder).partitionId(4).brokerId(1).checkpointPosition(977L);
        final BackupPartitionResponseEncoder.ExportersEncoder exporters = response.exportersCount(2);
        exporters.next().position(977L).exporterId("file");
        exporters.next().position(512L).exporterId("search");
        final BackupPartitionResponseDecoder decoder = new BackupPartitionResponseDecoder().wrapAndApplyHeader(
            roundTrip(BackupPartitionResponseDecoder.TEMPLATE_ID, response.encodedLength()), 0, headerDecoder);
        assertThat(decoder.partitionId()).isEqualTo(4);
        assertThat(decoder.brokerId()).isEqualTo(1);
        assertThat(decoder.checkpointPosition()).isEqualTo(977L);
        final BackupPartitionResponseDecoder.ExportersDecoder echoed = decoder.exporters();
        assertThat(echoed.count()).isEqualTo(2);
        assertThat(echoed.next().position()).isEqualTo(977L);
        assertThat(echoed.exporterId()).isEqualTo("file");
        assertThat(echoed.next().position()).isEqualTo(512L);
        assertThat(echoed.exporterId()).isEqualTo("search");
        assertThat(SERVER_DECODED.get(BackupPartitionResponseDecoder.TEMPLATE_ID)).contains("search");
    }

    @Test
    void backupHoldRequestAndResponseWithTheLease() throws Exception
    {
        final BackupHoldRequestEncoder request = new BackupHoldRequestEncoder().wrapAndApplyHeader(scratch, 0, headerEncoder)
            .backupId(1_764_770_000_001L).action(BackupHoldAction.OBEY).partitionId(7).leaseMillis(60_000L);
        final BackupHoldRequestDecoder requestDecoder = new BackupHoldRequestDecoder().wrapAndApplyHeader(
            roundTrip(BackupHoldRequestDecoder.TEMPLATE_ID, request.encodedLength()), 0, headerDecoder);
        assertThat(requestDecoder.backupId()).isEqualTo(1_764_770_000_001L);
        assertThat(requestDecoder.action()).isEqualTo(BackupHoldAction.OBEY);
        assertThat(requestDecoder.partitionId()).isEqualTo(7);
        assertThat(requestDecoder.leaseMillis()).isEqualTo(60_000L);

        final BackupHoldResponseEncoder response = new BackupHoldResponseEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder).heldBackupId(1_764_770_000_001L).partitionId(7).brokerId(2)
            .sinceMicros(1_764_770_000_001_000L).expiresAtMicros(1_764_770_060_001_000L);
        final BackupHoldResponseDecoder decoder = new BackupHoldResponseDecoder().wrapAndApplyHeader(
            roundTrip(BackupHoldResponseDecoder.TEMPLATE_ID, response.encodedLength()), 0, headerDecoder);
        assertThat(decoder.heldBackupId()).isEqualTo(1_764_770_000_001L);
        assertThat(decoder.partitionId()).isEqualTo(7);
        assertThat(decoder.brokerId()).isEqualTo(2);
        assertThat(decoder.sinceMicros()).isEqualTo(1_764_770_000_001_000L);
        assertThat(decoder.expiresAtMicros()).isEqualTo(1_764_770_060_001_000L);
    }

    @Test
    void sinkSnapshotsRequestAndResponseWithEverySink() throws Exception
    {
        final SinkSnapshotsRequestEncoder request = new SinkSnapshotsRequestEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder).backupId(42L).action(SinkSnapshotAction.CHECK)
            .timeoutMillis(20_000L);
        final SinkSnapshotsRequestDecoder requestDecoder = new SinkSnapshotsRequestDecoder().wrapAndApplyHeader(
            roundTrip(SinkSnapshotsRequestDecoder.TEMPLATE_ID, request.encodedLength()), 0, headerDecoder);
        assertThat(requestDecoder.backupId()).isEqualTo(42L);
        assertThat(requestDecoder.action()).isEqualTo(SinkSnapshotAction.CHECK);
        assertThat(requestDecoder.timeoutMillis()).isEqualTo(20_000L);

        final SinkSnapshotsResponseEncoder response = new SinkSnapshotsResponseEncoder()
            .wrapAndApplyHeader(scratch, 0, headerEncoder).brokerId(1);
        final SinkSnapshotsResponseEncoder.SinksEncoder sinks = response.sinksCount(2);
        sinks.next().exporterId("search").snapshot("sluice-backup-42").state("SUCCESS").detail("");
        sinks.next().exporterId("search-eu").snapshot("sluice-backup-42").state("FAILED").detail("repository missing");
        final SinkSnapshotsResponseDecoder decoder = new SinkSnapshotsResponseDecoder().wrapAndApplyHeader(
            roundTrip(SinkSnapshotsResponseDecoder.TEMPLATE_ID, response.encodedLength()), 0, headerDecoder);
        assertThat(decoder.brokerId()).isEqualTo(1);
        final SinkSnapshotsResponseDecoder.SinksDecoder echoed = decoder.sinks();
        assertThat(echoed.count()).isEqualTo(2);
        echoed.next();
        assertThat(echoed.exporterId()).isEqualTo("search");
        assertThat(echoed.snapshot()).isEqualTo("sluice-backup-42");
        assertThat(echoed.state()).isEqualTo("SUCCESS");
        assertThat(echoed.detail()).isEmpty();
        echoed.next();
        assertThat(echoed.exporterId()).isEqualTo("search-eu");
        assertThat(echoed.snapshot()).isEqualTo("sluice-backup-42");
        assertThat(echoed.state()).isEqualTo("FAILED");
        assertThat(echoed.detail()).isEqualTo("repository missing");
        assertThat(SERVER_DECODED.get(SinkSnapshotsResponseDecoder.TEMPLATE_ID)).contains("search-eu");
    }

    /** Fails when the schema gains a message this test does not round-trip yet. */
    @Test
    void everyMessageOfTheSchemaIsCovered() throws Exception
    {
        final Set<Integer> schemaIds = new TreeSet<>();
        try (InputStream in = SbeMessageRoundTripTest.class.getResourceAsStream("/sbe/sluice-codecs.xml"))
        {
            assertThat(in).as("schema on the classpath").isNotNull();
            final String xml = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            final Matcher matcher = Pattern.compile("<sbe:message\\s+name=\"\\w+\"\\s+id=\"(\\d+)\"").matcher(xml);
            while (matcher.find())
            {
                schemaIds.add(Integer.parseInt(matcher.group(1)));
            }
        }
        final Set<Integer> expected = new HashSet<>(Set.of(
            AdminRequestDecoder.TEMPLATE_ID, AdminResponseDecoder.TEMPLATE_ID, AppendRequestDecoder.TEMPLATE_ID,
            AppendResponseDecoder.TEMPLATE_ID, TopologyRequestDecoder.TEMPLATE_ID, TopologyResponseDecoder.TEMPLATE_ID,
            ErrorResponseDecoder.TEMPLATE_ID, BackfillRequestDecoder.TEMPLATE_ID,
            BackfillStatusRequestDecoder.TEMPLATE_ID, CancelBackfillRequestDecoder.TEMPLATE_ID,
            BackfillStatusResponseDecoder.TEMPLATE_ID,
            RebalanceRequestDecoder.TEMPLATE_ID, RebalanceResponseDecoder.TEMPLATE_ID,
            ExportersStatusRequestDecoder.TEMPLATE_ID, ExportersStatusResponseDecoder.TEMPLATE_ID,
            BackfillClaimRequestDecoder.TEMPLATE_ID, BackfillClaimResponseDecoder.TEMPLATE_ID,
            BackfillClaimsRequestDecoder.TEMPLATE_ID, BackfillClaimsResponseDecoder.TEMPLATE_ID,
            BackupPartitionRequestDecoder.TEMPLATE_ID, BackupPartitionResponseDecoder.TEMPLATE_ID,
            BackupHoldRequestDecoder.TEMPLATE_ID, BackupHoldResponseDecoder.TEMPLATE_ID,
            SinkSnapshotsRequestDecoder.TEMPLATE_ID, SinkSnapshotsResponseDecoder.TEMPLATE_ID));
        assertThat(schemaIds).as("template ids in the schema vs. the ones round-tripped here")
            .containsExactlyInAnyOrderElementsOf(expected);
    }

    /** Sends the {@code scratch} message (header + block/body of {@code bodyLength}) and returns the echo. */
    private DirectBuffer roundTrip(final int templateId, final int bodyLength) throws Exception
    {
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + bodyLength;
        final DirectBuffer answer = client.send(address, MessageWriter.of(scratch, 0, length), TIMEOUT)
            .get(20, TimeUnit.SECONDS);
        assertThat(SbeMessages.templateIdOf(answer, 0, answer.capacity())).isEqualTo(templateId);
        assertThat(answer.capacity()).isEqualTo(length);
        assertThat(SERVER_DECODED).containsKey(templateId);
        return answer;
    }
}
