package io.sluice.gateway.backfill;

import io.sluice.gateway.broker.BrokerRequests;
import io.sluice.gateway.broker.MalformedResponseException;
import io.sluice.gateway.broker.RequestWriters;
import io.sluice.gateway.broker.ResponseFrames;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.BackfillRequestEncoder;
import io.sluice.protocol.codecs.BackfillState;
import io.sluice.protocol.codecs.BackfillStatusRequestEncoder;
import io.sluice.protocol.codecs.BackfillStatusResponseDecoder;
import io.sluice.protocol.codecs.CancelBackfillRequestEncoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.TransportClient;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.sluice.gateway.broker.ResponseFrames.checkLimit;
import static io.sluice.gateway.broker.ResponseFrames.checkVarData;

/**
 * {@link BackfillClient} on the gateway's one request path ({@link BrokerRequests}). Requests keep only their values and encode
 * with per-thread encoders (the transport may write on any of its threads); answers are decoded with
 * per-thread decoders after {@link ResponseFrames} has checked the header, and every variable-length field is
 * bounds-checked before it is read, so a garbage answer fails the future instead of reading out of bounds.
 */
public final class SbeBackfillClient implements BackfillClient
{
    private static final ThreadLocal<Codecs> CODECS = ThreadLocal.withInitial(Codecs::new);

    private final BrokerRequests requests;

    public SbeBackfillClient(final TransportClient transport, final PartitionDistribution distribution)
    {
        this.requests = new BrokerRequests(transport, distribution);
    }

    @Override
    public CompletableFuture<List<BackfillTaskStatus>> start(
        final int brokerId, final int partitionId, final String backfillId, final String exporterId,
        final int taskCount, final int firstTaskId, final Duration timeout)
    {
        final byte[] backfill = utf8(backfillId);
        final byte[] exporter = utf8(exporterId);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + BackfillRequestEncoder.BLOCK_LENGTH +
            BackfillRequestEncoder.backfillIdHeaderLength() + backfill.length +
            BackfillRequestEncoder.exporterIdHeaderLength() + exporter.length;
        return send(brokerId, partitionId, RequestWriters.of(length, (buffer, offset) ->
        {
            final Codecs codecs = CODECS.get();
            codecs.backfillRequest.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .partitionId(partitionId)
                .taskCount(taskCount)
                .firstTaskId(firstTaskId)
                .putBackfillId(backfill, 0, backfill.length)
                .putExporterId(exporter, 0, exporter.length);
        }), timeout);
    }

    @Override
    public CompletableFuture<List<BackfillTaskStatus>> status(
        final int brokerId, final int partitionId, final String backfillId, final Duration timeout)
    {
        return sendById(brokerId, partitionId, backfillId, timeout,
            BackfillStatusRequestEncoder.BLOCK_LENGTH + BackfillStatusRequestEncoder.backfillIdHeaderLength(),
            (codecs, buffer, offset, backfill) -> codecs.statusRequest
                .wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .partitionId(partitionId)
                .putBackfillId(backfill, 0, backfill.length));
    }

    @Override
    public CompletableFuture<List<BackfillTaskStatus>> cancel(
        final int brokerId, final int partitionId, final String backfillId, final Duration timeout)
    {
        return sendById(brokerId, partitionId, backfillId, timeout,
            CancelBackfillRequestEncoder.BLOCK_LENGTH + CancelBackfillRequestEncoder.backfillIdHeaderLength(),
            (codecs, buffer, offset, backfill) -> codecs.cancelRequest
                .wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .partitionId(partitionId)
                .putBackfillId(backfill, 0, backfill.length));
    }

    /**
     * Sends a request that names one backfill and nothing else (a status or a cancel): {@code fixedLength} is its
     * block and the id's length header, and {@code encoder} writes it with this thread's codecs.
     */
    private CompletableFuture<List<BackfillTaskStatus>> sendById(
        final int brokerId, final int partitionId, final String backfillId, final Duration timeout,
        final int fixedLength, final ByIdEncoder encoder)
    {
        final byte[] backfill = utf8(backfillId);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + fixedLength + backfill.length;
        return send(brokerId, partitionId, RequestWriters.of(length,
            (buffer, offset) -> encoder.encode(CODECS.get(), buffer, offset, backfill)), timeout);
    }

    @FunctionalInterface
    private interface ByIdEncoder
    {
        void encode(Codecs codecs, MutableDirectBuffer buffer, int offset, byte[] backfillId);
    }

    private CompletableFuture<List<BackfillTaskStatus>> send(
        final int brokerId, final int partitionId, final MessageWriter request, final Duration timeout)
    {
        return requests.send(new PartitionReplica(brokerId, partitionId), request, timeout,
            (buffer, target, what) -> decode(buffer, partitionId, what));
    }

    /** Decodes a BackfillStatusResponse for the partition; an ErrorResponse becomes a BrokerErrorException. */
    static List<BackfillTaskStatus> decode(final DirectBuffer buffer, final int partitionId, final String what)
    {
        final Codecs codecs = CODECS.get();
        return ResponseFrames.decode(buffer, BackfillStatusResponseDecoder.TEMPLATE_ID, what, "backfill answer",
            (header, length) ->
        {
            final BackfillStatusResponseDecoder response = codecs.statusResponse.wrap(
                buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
            if (response.partitionId() != partitionId)
            {
                throw new MalformedResponseException(what + ": answer is for partition " + response.partitionId());
            }
            checkLimit(response.limit() + 4, length, what); // the group header
            final List<BackfillTaskStatus> tasks = new ArrayList<>();
            for (final BackfillStatusResponseDecoder.TasksDecoder task : response.tasks())
            {
                checkLimit(response.limit(), length, what);
                final int taskId = task.taskId();
                final BackfillState state = task.state();
                if (state == BackfillState.SBE_UNKNOWN || state == BackfillState.NULL_VAL)
                {
                    throw new MalformedResponseException(what + ": task " + taskId + " has unknown state " + task.stateRaw());
                }
                final long from = task.fromPosition();
                final long to = task.toPosition();
                final long exportedUpTo = task.exportedUpTo();
                final int attempts = task.attempts();
                final long createdAtMs = task.createdAtMs();
                final long updatedAtMs = task.updatedAtMs();
                checkVarData(buffer, response.limit(), length, what);
                final String backfillId = task.backfillId();
                checkVarData(buffer, response.limit(), length, what);
                final String exporterId = task.exporterId();
                checkVarData(buffer, response.limit(), length, what);
                final String failureReason = task.failureReason();
                checkLimit(response.limit(), length, what);
                tasks.add(new BackfillTaskStatus(partitionId, backfillId, exporterId, taskId, state, from, to,
                    exportedUpTo, attempts, createdAtMs, updatedAtMs, failureReason.isEmpty() ? null : failureReason));
            }
            return List.copyOf(tasks);
        });
    }

    private static byte[] utf8(final String value)
    {
        return value == null ? new byte[0] : value.getBytes(StandardCharsets.UTF_8);
    }

    private static final class Codecs
    {
        final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
        final BackfillRequestEncoder backfillRequest = new BackfillRequestEncoder();
        final BackfillStatusRequestEncoder statusRequest = new BackfillStatusRequestEncoder();
        final CancelBackfillRequestEncoder cancelRequest = new CancelBackfillRequestEncoder();
        final BackfillStatusResponseDecoder statusResponse = new BackfillStatusResponseDecoder();
    }
}
