package io.sluice.gateway.backfill;

import io.sluice.gateway.broker.AdminRequests;
import io.sluice.gateway.broker.BrokerRequests;
import io.sluice.gateway.broker.MalformedResponseException;
import io.sluice.gateway.broker.ResponseFrames;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.codecs.BackfillClaimOutcome;
import io.sluice.protocol.codecs.BackfillClaimPhase;
import io.sluice.protocol.codecs.BackfillClaimRequestEncoder;
import io.sluice.protocol.codecs.BackfillClaimResponseDecoder;
import io.sluice.protocol.codecs.BackfillClaimsRequestEncoder;
import io.sluice.protocol.codecs.BackfillClaimsResponseDecoder;
import io.sluice.protocol.codecs.BackfillRequestEncoder;
import io.sluice.protocol.codecs.BackfillState;
import io.sluice.protocol.codecs.BackfillStatusRequestEncoder;
import io.sluice.protocol.codecs.BackfillStatusResponseDecoder;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.CancelBackfillRequestEncoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.transport.TransportClient;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.sluice.gateway.broker.ResponseFrames.checkLimit;
import static io.sluice.gateway.broker.ResponseFrames.checkPartition;
import static io.sluice.gateway.broker.ResponseFrames.checkVarData;

/**
 * {@link BackfillClient} on the gateway's one request path ({@link BrokerRequests}, through {@link AdminRequests}): the
 * partitions' backfill requests and the control group's claim requests. Requests keep only their values and encode
 * with per-thread encoders (the transport may write on any of its threads); answers are decoded with
 * per-thread decoders after {@link ResponseFrames} has checked the header, and every variable-length field is
 * bounds-checked before it is read, so a garbage answer fails the future instead of reading out of bounds.
 */
public final class SbeBackfillClient implements BackfillClient
{
    private final AdminRequests<Codecs> requests;

    public SbeBackfillClient(final TransportClient transport, final PartitionDistribution distribution)
    {
        this.requests = new AdminRequests<>(transport, distribution, Codecs::new);
    }

    @Override
    public CompletableFuture<List<BackfillTaskStatus>> start(
        final int brokerId, final int partitionId, final String backfillId, final String exporterId,
        final int taskCount, final int firstTaskId, final long claimIndex, final Duration timeout)
    {
        final byte[] backfill = utf8(backfillId);
        final byte[] exporter = utf8(exporterId);
        final int length = BackfillRequestEncoder.BLOCK_LENGTH +
            BackfillRequestEncoder.backfillIdHeaderLength() + backfill.length +
            BackfillRequestEncoder.exporterIdHeaderLength() + exporter.length;
        return send(brokerId, partitionId, length, timeout,
            (codecs, buffer, offset) -> codecs.backfillRequest.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .partitionId(partitionId)
                .taskCount(taskCount)
                .firstTaskId(firstTaskId)
                .claimIndex(claimIndex)
                .putBackfillId(backfill, 0, backfill.length)
                .putExporterId(exporter, 0, exporter.length));
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

    @Override
    public CompletableFuture<ClaimAnswer> claim(final int brokerId, final ClaimRequest request, final Duration timeout)
    {
        final byte[] exporter = utf8(request.exporterId());
        final byte[] backfill = utf8(request.backfillId());
        final byte[] expected = utf8(request.expectedBackfillId());
        final int length = BackfillClaimRequestEncoder.BLOCK_LENGTH +
            BackfillClaimRequestEncoder.exporterIdHeaderLength() + exporter.length +
            BackfillClaimRequestEncoder.backfillIdHeaderLength() + backfill.length +
            BackfillClaimRequestEncoder.expectedBackfillIdHeaderLength() + expected.length;
        final String what = "broker " + brokerId + ": " + request.action() + " of exporter " + request.exporterId() +
            "'s claim";
        return requests.send(brokerId, length,
            (codecs, buffer, offset) -> codecs.claimRequest.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .action(request.action())
                .expectedPhase(request.expectedPhase())
                .empty(request.empty() ? BooleanType.TRUE : BooleanType.FALSE)
                .putExporterId(exporter, 0, exporter.length)
                .putBackfillId(backfill, 0, backfill.length)
                .putExpectedBackfillId(expected, 0, expected.length),
            timeout, what, SbeBackfillClient::decodeClaim);
    }

    @Override
    public CompletableFuture<ControlBackfills> claims(final int brokerId, final Duration timeout)
    {
        return requests.send(brokerId, BackfillClaimsRequestEncoder.BLOCK_LENGTH,
            (codecs, buffer, offset) -> codecs.claimsRequest.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .brokerId(brokerId),
            timeout, "broker " + brokerId + ": backfill claims", SbeBackfillClient::decodeClaims);
    }

    /** Decodes a BackfillClaimResponse; an ErrorResponse becomes a BrokerErrorException. */
    static ClaimAnswer decodeClaim(final Codecs codecs, final DirectBuffer buffer, final String what)
    {
        return ResponseFrames.decode(buffer, codecs.claimResponse, what, "claim answer", (response, length) ->
        {
            checkLimit(MessageHeaderDecoder.ENCODED_LENGTH + BackfillClaimResponseDecoder.BLOCK_LENGTH, length, what);
            final BackfillClaimOutcome outcome = response.outcome();
            if (outcome == BackfillClaimOutcome.SBE_UNKNOWN || outcome == BackfillClaimOutcome.NULL_VAL)
            {
                throw new MalformedResponseException(what + ": unknown claim outcome " + response.outcomeRaw());
            }
            final long claimIndex = response.claimIndex();
            final BackfillClaimPhase heldPhase = phase(response.heldPhase(), what);
            final long heldClaimedAtMs = response.heldClaimedAtMs();
            checkVarData(buffer, response.limit(), length, what);
            final String heldBackfillId = response.heldBackfillId();
            checkVarData(buffer, response.limit(), length, what);
            final String reason = response.reason();
            checkLimit(response.limit(), length, what);
            return new ClaimAnswer(outcome, claimIndex, heldPhase, heldBackfillId, heldClaimedAtMs, reason);
        });
    }

    /** Decodes a BackfillClaimsResponse; an ErrorResponse (NOT_LEADER naming the leader) a BrokerErrorException. */
    static ControlBackfills decodeClaims(final Codecs codecs, final DirectBuffer buffer, final String what)
    {
        return ResponseFrames.decode(buffer, codecs.claimsResponse, what, "claims answer", (response, length) ->
        {
            checkLimit(MessageHeaderDecoder.ENCODED_LENGTH + BackfillClaimsResponseDecoder.BLOCK_LENGTH, length, what);
            final long nowMs = response.nowMs();
            checkLimit(response.limit() + 4, length, what); // the claims' group header
            final List<ControlBackfills.Claim> claims = new ArrayList<>();
            for (final BackfillClaimsResponseDecoder.ClaimsDecoder claim : response.claims())
            {
                checkLimit(response.limit(), length, what);
                final BackfillClaimPhase phase = phase(claim.phase(), what);
                if (phase == BackfillClaimPhase.NONE)
                {
                    throw new MalformedResponseException(what + ": a held claim in phase NONE");
                }
                final long claimedAtMs = claim.claimedAtMs();
                final long releasableAtMs = claim.releasableAtMs();
                final long claimIndex = claim.claimIndex();
                checkVarData(buffer, response.limit(), length, what);
                final String exporterId = claim.exporterId();
                checkVarData(buffer, response.limit(), length, what);
                final String backfillId = claim.backfillId();
                claims.add(new ControlBackfills.Claim(exporterId, backfillId, phase, claimedAtMs, releasableAtMs,
                    claimIndex));
            }
            checkLimit(response.limit() + 4, length, what); // the empty backfills' group header
            final List<ControlBackfills.Empty> empties = new ArrayList<>();
            for (final BackfillClaimsResponseDecoder.EmptyBackfillsDecoder empty : response.emptyBackfills())
            {
                checkLimit(response.limit(), length, what);
                final long createdAtMs = empty.createdAtMs();
                checkVarData(buffer, response.limit(), length, what);
                final String backfillId = empty.backfillId();
                checkVarData(buffer, response.limit(), length, what);
                final String exporterId = empty.exporterId();
                empties.add(new ControlBackfills.Empty(backfillId, exporterId, createdAtMs));
            }
            checkLimit(response.limit(), length, what);
            return new ControlBackfills(nowMs, claims, empties);
        });
    }

    private static BackfillClaimPhase phase(final BackfillClaimPhase phase, final String what)
    {
        if (phase == BackfillClaimPhase.SBE_UNKNOWN || phase == BackfillClaimPhase.NULL_VAL)
        {
            throw new MalformedResponseException(what + ": unknown claim phase");
        }
        return phase;
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
        return send(brokerId, partitionId, fixedLength + backfill.length, timeout,
            (codecs, buffer, offset) -> encoder.encode(codecs, buffer, offset, backfill));
    }

    @FunctionalInterface
    private interface ByIdEncoder
    {
        void encode(Codecs codecs, MutableDirectBuffer buffer, int offset, byte[] backfillId);
    }

    /** Sends a request about one partition's backfills; the answer is its tasks. */
    private CompletableFuture<List<BackfillTaskStatus>> send(
        final int brokerId, final int partitionId, final int bodyLength, final Duration timeout,
        final AdminRequests.Encoder<Codecs> encoder)
    {
        return requests.send(brokerId, partitionId, bodyLength, encoder, timeout,
            (codecs, buffer, what) -> decode(codecs, buffer, partitionId, what));
    }

    /** Decodes a BackfillStatusResponse for the partition; an ErrorResponse becomes a BrokerErrorException. */
    static List<BackfillTaskStatus> decode(
        final Codecs codecs, final DirectBuffer buffer, final int partitionId, final String what)
    {
        return ResponseFrames.decode(buffer, codecs.statusResponse, what, "backfill answer", (response, length) ->
        {
            checkPartition(response.partitionId(), partitionId, what);
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
        final BackfillClaimRequestEncoder claimRequest = new BackfillClaimRequestEncoder();
        final BackfillClaimResponseDecoder claimResponse = new BackfillClaimResponseDecoder();
        final BackfillClaimsRequestEncoder claimsRequest = new BackfillClaimsRequestEncoder();
        final BackfillClaimsResponseDecoder claimsResponse = new BackfillClaimsResponseDecoder();
    }
}
