package io.sluice.broker.command;

import io.sluice.broker.backfill.BackfillCommandHandler;
import io.sluice.broker.backfill.BackfillMessages;
import io.sluice.broker.control.BackfillClaims;
import io.sluice.broker.control.ControlGroup;
import io.sluice.broker.control.ExportingChange;
import io.sluice.broker.control.ExportingControl;
import io.sluice.broker.log.codecs.IdempotencyScope;
import io.sluice.broker.log.codecs.RecordBodyEncoder;
import io.sluice.broker.partition.AppendBatcher;
import io.sluice.broker.partition.AppendEntries;
import io.sluice.broker.partition.Partition;
import io.sluice.broker.partition.PartitionException;
import io.sluice.broker.partition.RebalanceOutcome;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.AdminRequestDecoder;
import io.sluice.broker.disk.DiskGuard;
import io.sluice.protocol.codecs.AppendRequestDecoder;
import io.sluice.protocol.codecs.TopologyResponseEncoder;
import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimPhase;
import io.sluice.protocol.codecs.BackfillClaimRequestDecoder;
import io.sluice.protocol.codecs.BackfillClaimsRequestDecoder;
import io.sluice.protocol.codecs.BackfillRequestDecoder;
import io.sluice.protocol.codecs.BackfillStatusRequestDecoder;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.CancelBackfillRequestDecoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportersStatusRequestDecoder;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.OperationScope;
import io.sluice.protocol.codecs.RebalanceRequestDecoder;
import io.sluice.protocol.codecs.TopologyRequestDecoder;
import io.sluice.protocol.concurrent.Futures;
import io.sluice.protocol.message.AdminLimits;
import io.sluice.protocol.message.AppendLimits;
import io.sluice.protocol.message.ErrorResponseWriter;
import io.sluice.protocol.message.SbeMessages;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.RequestHandler;
import io.sluice.protocol.transport.ResponseChannel;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The broker's command, admin and topology API: decodes each request (once, with reusable decoders per I/O
 * thread), dispatches it to the partition and answers exactly once, also for malformed or unknown input.
 * Never throws to the transport.
 */
public final class CommandApi implements RequestHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(CommandApi.class);
    /** A rebalance blocks the partition's writes while the transfer runs: a caller may not ask for more than this. */
    static final long MAX_REBALANCE_TIMEOUT_MS = 60_000;

    private final int brokerId;
    private final PartitionDistribution distribution;
    private final Map<Integer, Partition> partitions;
    private final ControlGroup control;
    private final ExportingControl exportingControl;
    private final BackfillClaims backfillClaims;
    private final Executor adminExecutor;
    private final Clock clock;
    private final DiskGuard diskGuard;
    private final ThreadLocal<Decoders> decoders = ThreadLocal.withInitial(Decoders::new);

    /**
     * @param adminExecutor runs the Raft proposals of admin requests, off the transport's I/O thread: a proposal
     *                      takes from a fraction of a millisecond to a few under load, and a fan-out brings one
     *                      request per partition on the same connection, so proposing inline would queue them.
     */
    public CommandApi(
        final int brokerId,
        final PartitionDistribution distribution,
        final Map<Integer, Partition> partitions,
        final ControlGroup control,
        final ExportingControl exportingControl,
        final BackfillClaims backfillClaims,
        final Executor adminExecutor,
        final DiskGuard diskGuard)
    {
        this(brokerId, distribution, partitions, control, exportingControl, backfillClaims, adminExecutor,
            Clock.systemUTC(), diskGuard);
    }

    /** @param clock bounds exporting state versions: one beyond this clock plus {@link AdminLimits#MAX_VERSION_AHEAD} is refused. */
    public CommandApi(
        final int brokerId,
        final PartitionDistribution distribution,
        final Map<Integer, Partition> partitions,
        final ControlGroup control,
        final ExportingControl exportingControl,
        final BackfillClaims backfillClaims,
        final Executor adminExecutor,
        final Clock clock,
        final DiskGuard diskGuard)
    {
        this.brokerId = brokerId;
        this.distribution = distribution;
        this.partitions = Map.copyOf(partitions);
        this.control = control;
        this.exportingControl = exportingControl;
        this.backfillClaims = backfillClaims;
        this.adminExecutor = adminExecutor;
        this.clock = clock;
        this.diskGuard = diskGuard;
    }

    @Override
    public void onRequest(final DirectBuffer buffer, final int offset, final int length, final ResponseChannel response)
    {
        try
        {
            final int templateId = SbeMessages.templateIdOf(buffer, offset, length);
            if (templateId == SbeMessages.NOT_A_MESSAGE)
            {
                malformed(response, 0, "not a Sluice message: " + SbeMessages.describe(buffer, offset, length));
                return;
            }
            final Decoders d = decoders.get();
            d.view.wrap(buffer, offset, length);
            d.header.wrap(d.view, 0);
            final int bodyOffset = MessageHeaderDecoder.ENCODED_LENGTH;
            final int blockLength = d.header.blockLength();
            final int version = d.header.version();
            switch (templateId)
            {
                case AppendRequestDecoder.TEMPLATE_ID ->
                    onAppend(d, d.append.wrap(d.view, bodyOffset, blockLength, version), response);
                case AdminRequestDecoder.TEMPLATE_ID ->
                    onAdmin(d.admin.wrap(d.view, bodyOffset, blockLength, version), response);
                case TopologyRequestDecoder.TEMPLATE_ID ->
                    onTopology(d.topology.wrap(d.view, bodyOffset, blockLength, version), response);
                case BackfillRequestDecoder.TEMPLATE_ID ->
                {
                    // The claim's index came with version 4: a block without it cannot say it has none.
                    if (version < 4 || !blockTooShort(response, "backfill request", blockLength,
                        BackfillRequestDecoder.BLOCK_LENGTH))
                    {
                        onBackfillStart(d.backfill.wrap(d.view, bodyOffset, blockLength, version), response);
                    }
                }
                case BackfillClaimRequestDecoder.TEMPLATE_ID ->
                {
                    if (!blockTooShort(response, "backfill claim request", blockLength,
                        BackfillClaimRequestDecoder.BLOCK_LENGTH))
                    {
                        onBackfillClaim(d.backfillClaim.wrap(d.view, bodyOffset, blockLength, version), response);
                    }
                }
                case BackfillClaimsRequestDecoder.TEMPLATE_ID ->
                {
                    if (!blockTooShort(response, "backfill claims request", blockLength,
                        BackfillClaimsRequestDecoder.BLOCK_LENGTH))
                    {
                        onBackfillClaims(d.backfillClaims.wrap(d.view, bodyOffset, blockLength, version), response);
                    }
                }
                case BackfillStatusRequestDecoder.TEMPLATE_ID ->
                    onBackfillStatus(d.backfillStatus.wrap(d.view, bodyOffset, blockLength, version), response);
                case CancelBackfillRequestDecoder.TEMPLATE_ID ->
                    onBackfillCancel(d.cancelBackfill.wrap(d.view, bodyOffset, blockLength, version), response);
                case RebalanceRequestDecoder.TEMPLATE_ID ->
                    onRebalance(d.rebalance.wrap(d.view, bodyOffset, blockLength, version), response);
                case ExportersStatusRequestDecoder.TEMPLATE_ID ->
                    onExportersStatus(d.exportersStatus.wrap(d.view, bodyOffset, blockLength, version).partitionId(),
                        response);
                default -> malformed(response, 0, "broker " + brokerId + ": not a request: " +
                    SbeMessages.describe(buffer, offset, length));
            }
        }
        catch (final RuntimeException e)
        {
            // Generated decoders read out of bounds on lying lengths: the view is bounded, so that lands here.
            malformed(response, 0, "broker " + brokerId + ": malformed request: " + e.getMessage());
        }
    }

    // Backfill requests are served by the partition's leader; a follower names the leader, as for appends. Text
    // fields longer than the backfill state can hold are refused before they are read.

    private void onBackfillStart(final BackfillRequestDecoder request, final ResponseChannel response)
    {
        final int partitionId = request.partitionId();
        final int taskCount = request.taskCount();
        final int firstTaskId = request.firstTaskId();
        // Null (0) before protocol version 4, or from a sender that took no claim.
        final long claimIndex = request.claimIndex();
        final String backfillId = text(request.backfillIdLength(), request::backfillId, partitionId, response);
        final String exporterId = backfillId == null ? null :
            text(request.exporterIdLength(), request::exporterId, partitionId, response);
        if (exporterId != null && claimIndex < 0)
        {
            invalid(response, partitionId, "partition " + partitionId + " on broker " + brokerId +
                ": a claim's control index is at least 1, was " + claimIndex);
            return;
        }
        final Partition partition = exporterId == null ? null : leaderOrRespond(partitionId, response);
        if (partition == null)
        {
            return;
        }
        // The claim first: a backfill whose claim was released or taken over registers nothing.
        final CompletableFuture<String> refusal =
            backfillClaims.registrationRefusal(exporterId, backfillId, claimIndex);
        final Runnable register = () ->
        {
            final String refused = refusal.getNow(null);
            if (refused != null)
            {
                response.respond(ErrorResponseWriter.of(ErrorCode.CONFLICT, partitionId, ErrorResponseWriter.NO_LEADER,
                    "partition " + partitionId + " on broker " + brokerId + ": " + refused));
                return;
            }
            partition.backfills().handler().onStart(partitionId, backfillId, exporterId, taskCount, firstTaskId, response);
        };
        if (refusal.isDone() && !refusal.isCompletedExceptionally())
        {
            register.run();
            return;
        }
        // The claim is not applied here yet: wait for it off the control group's apply thread.
        refusal.whenCompleteAsync((ignored, error) ->
        {
            if (error != null)
            {
                respondError(response, partitionId, error);
            }
            else
            {
                register.run();
            }
        }, adminExecutor);
    }

    // A backfill claim is the control group's: any broker commits a change (forwarding it to the group's leader) and
    // answers once its own replica applied it; the read is the leader's.

    private void onBackfillClaim(final BackfillClaimRequestDecoder request, final ResponseChannel response)
    {
        final BackfillClaimAction action = request.action();
        if (action != BackfillClaimAction.CLAIM && action != BackfillClaimAction.STARTED &&
            action != BackfillClaimAction.RELEASE)
        {
            malformed(response, 0, "broker " + brokerId + ": unknown backfill claim action " + request.actionRaw());
            return;
        }
        final BackfillClaimPhase expectedPhase = request.expectedPhase();
        if (expectedPhase != BackfillClaimPhase.NONE && expectedPhase != BackfillClaimPhase.STARTING &&
            expectedPhase != BackfillClaimPhase.STARTED)
        {
            malformed(response, 0, "broker " + brokerId + ": unknown backfill claim phase " + request.expectedPhaseRaw());
            return;
        }
        final short empty = request.emptyRaw();
        if (empty != BooleanType.TRUE.value() && empty != BooleanType.FALSE.value())
        {
            malformed(response, 0, "broker " + brokerId + ": backfill claim empty is " + empty + ", not 0 or 1");
            return;
        }
        final String exporterId = text(request.exporterIdLength(), request::exporterId, 0, response);
        final String backfillId = exporterId == null ? null : text(request.backfillIdLength(), request::backfillId, 0, response);
        final String expectedBackfillId = backfillId == null ? null :
            text(request.expectedBackfillIdLength(), request::expectedBackfillId, 0, response);
        if (expectedBackfillId == null)
        {
            return;
        }
        final CompletableFuture<BackfillClaims.Answer> changed = onAdminExecutor(0, response, () ->
            backfillClaims.change(action, exporterId, backfillId, expectedPhase, expectedBackfillId,
                empty == BooleanType.TRUE.value()));
        if (changed != null)
        {
            respondWhenDone(changed, response, 0, ResponseWriters::backfillClaim);
        }
    }

    private void onBackfillClaims(final BackfillClaimsRequestDecoder request, final ResponseChannel response)
    {
        if (namesAnotherBroker(request.brokerId(), BackfillClaimsRequestDecoder.brokerIdNullValue(), "backfill claims",
            response))
        {
            return;
        }
        respondWhenDone(backfillClaims.read(), response, 0, ResponseWriters::backfillClaims);
    }

    private void onBackfillStatus(final BackfillStatusRequestDecoder request, final ResponseChannel response)
    {
        final int partitionId = request.partitionId();
        onNamedBackfill(partitionId, text(request.backfillIdLength(), request::backfillId, partitionId, response),
            response, BackfillCommandHandler::onStatus);
    }

    private void onBackfillCancel(final CancelBackfillRequestDecoder request, final ResponseChannel response)
    {
        final int partitionId = request.partitionId();
        onNamedBackfill(partitionId, text(request.backfillIdLength(), request::backfillId, partitionId, response),
            response, BackfillCommandHandler::onCancel);
    }

    /** Runs a request that names one backfill on the partition's leader; a null id was already answered. */
    private void onNamedBackfill(
        final int partitionId,
        final String backfillId,
        final ResponseChannel response,
        final NamedBackfillCommand command)
    {
        final Partition partition = backfillId == null ? null : leaderOrRespond(partitionId, response);
        if (partition != null)
        {
            command.run(partition.backfills().handler(), partitionId, backfillId, response);
        }
    }

    @FunctionalInterface
    private interface NamedBackfillCommand
    {
        void run(BackfillCommandHandler handler, int partitionId, String backfillId, ResponseChannel response);
    }

    /** The next text field, or null after answering MALFORMED_REQUEST when it is longer than a backfill may hold. */
    private String text(final long length, final java.util.function.Supplier<String> read, final int partitionId,
        final ResponseChannel response)
    {
        if (length > BackfillMessages.MAX_STRING_BYTES)
        {
            malformed(response, partitionId, "broker " + brokerId + ": a text field of " + length +
                " bytes exceeds the " + BackfillMessages.MAX_STRING_BYTES + " a backfill may hold");
            return null;
        }
        return read.get();
    }

    /** The partition if this broker hosts and leads it; otherwise answers the error (naming the leader) and returns null. */
    private Partition leaderOrRespond(final int partitionId, final ResponseChannel response)
    {
        final Partition partition = partitionOrRespond(partitionId, response);
        if (partition == null)
        {
            return null;
        }
        final PartitionException notLeader = partition.notLeaderError();
        if (notLeader != null)
        {
            respondError(response, partitionId, notLeader);
            return null;
        }
        return partition;
    }

    /** The exporters view is the leader's: only its director runs the exporters; a follower names the leader. */
    private void onExportersStatus(final int partitionId, final ResponseChannel response)
    {
        final Partition partition = leaderOrRespond(partitionId, response);
        if (partition == null)
        {
            return;
        }
        final PartitionStatus status = partition.status();
        response.respond(ResponseWriters.exportersStatus(partitionId, status.exportingState(), status.lastPosition(),
            partition.director().exporterStatuses()));
    }

    private void onAppend(final Decoders d, final AppendRequestDecoder request, final ResponseChannel response)
    {
        final int partitionId = request.partitionId();
        final AppendRequestDecoder.RecordsDecoder records = request.records();
        final int count = records.count();
        final AppendBatcher.AppendId id;
        try
        {
            id = appendId(request);
        }
        catch (final IllegalArgumentException e)
        {
            malformed(response, partitionId, "partition " + partitionId + " on broker " + brokerId + ": " + e.getMessage());
            return;
        }
        if (count < 1 && id == null)
        {
            response.respond(ErrorResponseWriter.of(ErrorCode.INVALID_ARGUMENT, partitionId, ErrorResponseWriter.NO_LEADER,
                "partition " + partitionId + " on broker " + brokerId + ": an append needs at least one record"));
            return;
        }
        final Partition partition = partitionOrRespond(partitionId, response);
        if (partition == null)
        {
            return;
        }
        final String diskFull = diskGuard == null ? null : diskGuard.refusal();
        if (diskFull != null)
        {
            // Only appends: exporter acknowledgements, pause and resume go on, so the log can compact and free the disk.
            diskGuard.countRefused();
            response.respond(ErrorResponseWriter.of(ErrorCode.DISK_FULL, partitionId, ErrorResponseWriter.NO_LEADER,
                diskFull));
            return;
        }

        // First pass: validate every length against the frame and size the records.
        long recordsLength = 0;
        for (final AppendRequestDecoder.RecordsDecoder record : records)
        {
            record.timestamp();
            final int keyLength = record.keyLength();
            record.skipKey();
            final int payloadLength = record.payloadLength();
            record.skipPayload();
            if (keyLength < 0 || payloadLength < 0)
            {
                malformed(response, partitionId, "partition " + partitionId + " on broker " + brokerId +
                    ": negative key or payload length");
                return;
            }
            if (keyLength > AppendLimits.MAX_KEY_BYTES || payloadLength > AppendLimits.MAX_PAYLOAD_BYTES)
            {
                invalid(response, partitionId, "partition " + partitionId + " on broker " + brokerId + ": a record's " +
                    (keyLength > AppendLimits.MAX_KEY_BYTES ? "key of " + keyLength + " bytes exceeds the maximum of " +
                    AppendLimits.MAX_KEY_BYTES : "payload of " + payloadLength + " bytes exceeds the maximum of " +
                    AppendLimits.MAX_PAYLOAD_BYTES) + " bytes");
                return;
            }
            recordsLength += AppendEntries.recordLength(keyLength, payloadLength);
        }
        if (request.limit() > d.view.capacity() || recordsLength > d.view.capacity())
        {
            malformed(response, partitionId, "partition " + partitionId + " on broker " + brokerId +
                ": append request lengths run " + (request.limit() - d.view.capacity()) + " bytes past the frame");
            return;
        }
        if (recordsLength > AppendLimits.MAX_BATCH_BYTES)
        {
            // Proposing it would make an entry Raft cannot replicate: refuse it instead, before anything is written.
            response.respond(ErrorResponseWriter.of(ErrorCode.INVALID_ARGUMENT, partitionId, ErrorResponseWriter.NO_LEADER,
                "partition " + partitionId + " on broker " + brokerId + ": a batch of " + recordsLength +
                " bytes (keys, payloads and record headers) exceeds the limit of " + AppendLimits.MAX_BATCH_BYTES + " bytes"));
            return;
        }

        // Second pass: encode the records into the batch's own array, copied from the frame (a view over the
        // transport's buffer): the one copy they take on their way to the log.
        final byte[] batch = AppendEntries.newBatch(count, (int)recordsLength, id);
        final UnsafeBuffer batchBuffer = d.batch;
        batchBuffer.wrap(batch);
        final RecordBodyEncoder encoded = d.record;
        int cursor = AppendEntries.RECORDS_OFFSET;
        int index = 0;
        try
        {
            for (final AppendRequestDecoder.RecordsDecoder record : request.sbeRewind().records())
            {
                encoded.wrap(batchBuffer, cursor).timestamp(record.timestamp());
                record.wrapKey(d.keyView);
                encoded.putKey(d.keyView, 0, d.keyView.capacity());
                record.wrapPayload(d.payloadView);
                final int payloadLength = d.payloadView.capacity();
                encoded.putPayload(d.payloadView, 0, payloadLength);
                cursor = encoded.limit();
                final String problem = JsonPayloads.problem(batch, cursor - payloadLength, payloadLength);
                if (problem != null)
                {
                    invalid(response, partitionId, "partition " + partitionId + " on broker " + brokerId + ": record " +
                        index + ": " + problem + "; nothing was appended");
                    return;
                }
                index++;
            }
        }
        finally
        {
            batchBuffer.wrap(0, 0);
            d.keyView.wrap(0, 0);
            d.payloadView.wrap(0, 0);
        }

        respondWhenDone(partition.append(batch), response, partitionId,
            (positions) -> ResponseWriters.append(partitionId, positions.firstPosition(), positions.count()));
    }

    /** The batch's idempotency id, or null when the request carries none (window 0, or sent before version 2). */
    private static AppendBatcher.AppendId appendId(final AppendRequestDecoder request)
    {
        final long windowMs = request.idempotencyWindowMs();
        if (windowMs == AppendRequestDecoder.idempotencyWindowMsNullValue() || windowMs == 0)
        {
            return null;
        }
        if (windowMs < 0)
        {
            throw new IllegalArgumentException("idempotency window " + windowMs + " ms is negative");
        }
        final IdempotencyScope scope = switch (request.idempotencyScope())
        {
            case 1 -> IdempotencyScope.CLIENT;
            case 2 -> IdempotencyScope.GATEWAY;
            default -> throw new IllegalArgumentException("unknown idempotency scope " + request.idempotencyScope());
        };
        return new AppendBatcher.AppendId(scope, request.idHigh(), request.idLow(), request.bodyDigest(), windowMs);
    }

    private void onAdmin(final AdminRequestDecoder request, final ResponseChannel response)
    {
        final int requestBroker = request.brokerId();
        final int partitionId = request.partitionId();
        final long version = request.version();
        final ExportingState target = switch (request.kind())
        {
            case PAUSE_EXPORTING -> ExportingState.PAUSED;
            case SOFT_PAUSE_EXPORTING -> ExportingState.SOFT_PAUSED;
            case RESUME_EXPORTING -> ExportingState.EXPORTING;
            default -> null;
        };
        if (target == null)
        {
            malformed(response, partitionId, "partition " + partitionId + " on broker " + brokerId +
                ": unknown admin request kind " + request.kindRaw());
            return;
        }
        // Absent (null) before schema version 1: a sender that does not say is not waited for.
        final short leaderTargeted = request.leaderTargetedRaw();
        if (leaderTargeted != BooleanType.TRUE.value() && leaderTargeted != BooleanType.FALSE.value() &&
            leaderTargeted != BooleanType.NULL_VAL.value())
        {
            malformed(response, partitionId, "partition " + partitionId + " on broker " + brokerId +
                ": admin request leaderTargeted is " + request.leaderTargetedRaw() + ", not 0 or 1");
            return;
        }
        if (requestBroker != brokerId)
        {
            response.respond(ErrorResponseWriter.of(ErrorCode.NOT_MEMBER, partitionId, ErrorResponseWriter.NO_LEADER,
                "admin request for broker " + requestBroker + " reached broker " + brokerId));
            return;
        }
        final Partition partition = partitionOrRespond(partitionId, response);
        if (partition == null)
        {
            return;
        }
        final long maxVersion = AdminLimits.maxVersionAt(epochMicros(clock.instant()));
        if (version > maxVersion)
        {
            invalid(response, partitionId, "partition " + partitionId + " on broker " + brokerId + ": exporting version " +
                version + " is more than " + AdminLimits.MAX_VERSION_AHEAD.toMinutes() + " minutes ahead of this " +
                "broker's clock (at most " + maxVersion + " now); check the gateway's clock");
            return;
        }
        final ExportingChange operation = operationOf(request, partitionId, target, version, response);
        if (operation == null)
        {
            return;
        }
        // Absent before protocol version 5 (the null value): no lease.
        final long leaseMicros = request.leaseMicros() == AdminRequestDecoder.leaseMicrosNullValue() ? 0 :
            request.leaseMicros();
        if (leaseMicros < 0 || (leaseMicros > 0 && target == ExportingState.EXPORTING))
        {
            invalid(response, partitionId, "partition " + partitionId + " on broker " + brokerId + ": lease of " +
                leaseMicros + " µs with " + target + ": a lease is positive and only for a pause");
            return;
        }
        final ExportingChange change = operation.withLease(leaseMicros);
        final boolean leaderAsked = leaderTargeted == BooleanType.TRUE.value();
        final CompletableFuture<Void> changed =
            onAdminExecutor(partitionId, response, () -> exportingControl.change(partitionId, change, leaderAsked));
        if (changed == null)
        {
            return;
        }
        respondWhenDone(changed, response, partitionId, (ignored) -> ResponseWriters.admin(brokerId, partition.status()));
    }

    /**
     * The whole operation a pair request belongs to: every partition of the cluster, the listed ones (this request's
     * among them, each one of the cluster's), or before protocol version 3 only this request's partition. Answers
     * MALFORMED_REQUEST and returns null otherwise.
     */
    private ExportingChange operationOf(
        final AdminRequestDecoder request,
        final int partitionId,
        final ExportingState target,
        final long version,
        final ResponseChannel response)
    {
        final String pair = "partition " + partitionId + " on broker " + brokerId;
        final OperationScope scope = request.operationScope();
        final AdminRequestDecoder.OperationPartitionsDecoder listed = request.operationPartitions();
        switch (scope)
        {
            case NULL_VAL, PARTITION ->
            {
                return ExportingChange.of(version, target, partitionId);
            }
            case ALL ->
            {
                if (listed.count() != 0)
                {
                    malformed(response, partitionId, pair + ": an admin request for every partition lists " +
                        listed.count() + " partitions");
                    return null;
                }
                return ExportingChange.ofAll(version, target);
            }
            case LISTED ->
            {
                final BitSet partitionIds = new BitSet();
                for (final AdminRequestDecoder.OperationPartitionsDecoder p : listed)
                {
                    if (!distribution.isPartition(p.partitionId()))
                    {
                        malformed(response, partitionId, pair + ": the operation lists partition " + p.partitionId() +
                            ", not one of 1.." + distribution.partitionCount());
                        return null;
                    }
                    partitionIds.set(p.partitionId());
                }
                if (!partitionIds.get(partitionId))
                {
                    malformed(response, partitionId, pair + ": the operation's partitions " + partitionIds +
                        " leave out the request's own");
                    return null;
                }
                return new ExportingChange(version, target, false, partitionIds);
            }
            default ->
            {
                malformed(response, partitionId, pair + ": unknown operation scope " + request.operationScopeRaw());
                return null;
            }
        }
    }

    /** Served by the partition's leader; a follower names the leader it knows, as for appends. */
    private void onRebalance(final RebalanceRequestDecoder request, final ResponseChannel response)
    {
        final int partitionId = request.partitionId();
        final long timeoutMs = request.timeoutMs();
        if (timeoutMs < 1 || timeoutMs > MAX_REBALANCE_TIMEOUT_MS)
        {
            response.respond(ErrorResponseWriter.of(ErrorCode.INVALID_ARGUMENT, partitionId, ErrorResponseWriter.NO_LEADER,
                "partition " + partitionId + " on broker " + brokerId + ": rebalance timeout must be 1.." +
                MAX_REBALANCE_TIMEOUT_MS + " ms, was " + timeoutMs));
            return;
        }
        final Partition partition = partitionOrRespond(partitionId, response);
        if (partition == null)
        {
            return;
        }
        // On the admin executor: a transfer first stops the partition's exporters, which waits for an export in
        // flight and closes the sinks (a Kafka producer's close can block), and this I/O thread serves every other
        // request of the connection meanwhile.
        final CompletableFuture<RebalanceOutcome> rebalanced =
            onAdminExecutor(partitionId, response, () -> partition.rebalance(Duration.ofMillis(timeoutMs)));
        if (rebalanced == null)
        {
            return;
        }
        respondWhenDone(rebalanced, response, partitionId, ResponseWriters::rebalance);
    }

    private void onTopology(final TopologyRequestDecoder request, final ResponseChannel response)
    {
        if (namesAnotherBroker(request.brokerId(), TopologyRequestDecoder.brokerIdNullValue(), "topology", response))
        {
            return;
        }
        final List<PartitionStatus> statuses = new ArrayList<>(partitions.size());
        partitions.keySet().stream().sorted().forEach((id) -> statuses.add(partitions.get(id).status()));
        response.respond(ResponseWriters.topology(brokerId, control.leaderId(), control.caughtUp(), statuses,
            diskGuard == null ? TopologyResponseEncoder.diskUsedRatioNullValue() : diskGuard.usedRatio(),
            diskGuard == null ? TopologyResponseEncoder.diskFreeBytesNullValue() : diskGuard.freeBytes(),
            diskGuard == null ? 0 : diskGuard.appendsRefused(),
            control.state().leaseExpiries()));
    }

    private Partition partitionOrRespond(final int partitionId, final ResponseChannel response)
    {
        final Partition partition = partitions.get(partitionId);
        if (partition != null)
        {
            return partition;
        }
        if (distribution.isPartition(partitionId))
        {
            response.respond(ErrorResponseWriter.of(ErrorCode.NOT_MEMBER, partitionId, ErrorResponseWriter.NO_LEADER,
                "partition " + partitionId + " is not replicated on broker " + brokerId + " (replicas: " +
                distribution.replicasOf(partitionId) + ")"));
        }
        else
        {
            response.respond(ErrorResponseWriter.of(ErrorCode.PARTITION_NOT_FOUND, partitionId,
                ErrorResponseWriter.NO_LEADER, "partition " + partitionId + " does not exist (partitions are 1.." +
                distribution.partitionCount() + ")"));
        }
        return null;
    }

    /**
     * Starts {@code work} on the admin executor, off the transport's I/O thread; answers UNAVAILABLE and returns
     * null when the broker is shutting down (the executor refuses work).
     */
    private <T> CompletableFuture<T> onAdminExecutor(
        final int partitionId, final ResponseChannel response, final Supplier<CompletableFuture<T>> work)
    {
        try
        {
            return CompletableFuture.supplyAsync(work, adminExecutor).thenCompose((f) -> f);
        }
        catch (final RejectedExecutionException e)
        {
            response.respond(ErrorResponseWriter.of(ErrorCode.UNAVAILABLE, partitionId, ErrorResponseWriter.NO_LEADER,
                "partition " + partitionId + " on broker " + brokerId + ": broker is shutting down"));
            return null;
        }
    }

    /**
     * Whether a request that may name a broker ({@code noBroker}: it names none, so it is for any) names another
     * than this one; then it is answered NOT_MEMBER.
     */
    private boolean namesAnotherBroker(
        final int requestBroker, final int noBroker, final String what, final ResponseChannel response)
    {
        if (requestBroker == noBroker || requestBroker == brokerId)
        {
            return false;
        }
        response.respond(ErrorResponseWriter.of(ErrorCode.NOT_MEMBER, 0, ErrorResponseWriter.NO_LEADER,
            what + " request for broker " + requestBroker + " reached broker " + brokerId));
        return true;
    }

    /** Answers with {@code writer}'s message once {@code result} completes, or with the error it failed with. */
    private <T> void respondWhenDone(
        final CompletableFuture<T> result,
        final ResponseChannel response,
        final int partitionId,
        final Function<T, MessageWriter> writer)
    {
        result.whenComplete((value, error) ->
        {
            if (error != null)
            {
                respondError(response, partitionId, error);
            }
            else
            {
                response.respond(writer.apply(value));
            }
        });
    }

    private void respondError(final ResponseChannel response, final int partitionId, final Throwable error)
    {
        final Throwable cause = Futures.unwrapAll(error);
        if (cause instanceof PartitionException failure)
        {
            response.respond(ErrorResponseWriter.of(failure.code(), partitionId,
                failure.leaderId() < 0 ? ErrorResponseWriter.NO_LEADER : failure.leaderId(), failure.getMessage()));
        }
        else
        {
            LOG.warn("partition {} on broker {}: request failed", partitionId, brokerId, cause);
            response.respond(ErrorResponseWriter.of(ErrorCode.INTERNAL_ERROR, partitionId, ErrorResponseWriter.NO_LEADER,
                "partition " + partitionId + " on broker " + brokerId + ": " + cause));
        }
    }

    private void invalid(final ResponseChannel response, final int partitionId, final String message)
    {
        response.respond(ErrorResponseWriter.of(ErrorCode.INVALID_ARGUMENT, partitionId,
            ErrorResponseWriter.NO_LEADER, message));
    }

    private static long epochMicros(final Instant instant)
    {
        return instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1_000L;
    }

    /** Answers MALFORMED_REQUEST when a message's block is shorter than the fields this version reads from it. */
    private boolean blockTooShort(final ResponseChannel response, final String what, final int blockLength, final int known)
    {
        if (blockLength >= known)
        {
            return false;
        }
        malformed(response, 0, "broker " + brokerId + ": a " + what + " with a block of " + blockLength + " bytes, " +
            known + " expected");
        return true;
    }

    private void malformed(final ResponseChannel response, final int partitionId, final String message)
    {
        response.respond(ErrorResponseWriter.of(ErrorCode.MALFORMED_REQUEST, partitionId,
            ErrorResponseWriter.NO_LEADER, message));
    }

    /** Reusable decoders and encoders of one I/O thread. */
    private static final class Decoders
    {
        final UnsafeBuffer view = new UnsafeBuffer(0, 0);
        final UnsafeBuffer keyView = new UnsafeBuffer(0, 0);
        final UnsafeBuffer payloadView = new UnsafeBuffer(0, 0);
        final UnsafeBuffer batch = new UnsafeBuffer(0, 0);
        final RecordBodyEncoder record = new RecordBodyEncoder();
        final MessageHeaderDecoder header = new MessageHeaderDecoder();
        final AppendRequestDecoder append = new AppendRequestDecoder();
        final AdminRequestDecoder admin = new AdminRequestDecoder();
        final TopologyRequestDecoder topology = new TopologyRequestDecoder();
        final BackfillRequestDecoder backfill = new BackfillRequestDecoder();
        final BackfillClaimRequestDecoder backfillClaim = new BackfillClaimRequestDecoder();
        final BackfillClaimsRequestDecoder backfillClaims = new BackfillClaimsRequestDecoder();
        final BackfillStatusRequestDecoder backfillStatus = new BackfillStatusRequestDecoder();
        final CancelBackfillRequestDecoder cancelBackfill = new CancelBackfillRequestDecoder();
        final RebalanceRequestDecoder rebalance = new RebalanceRequestDecoder();
        final ExportersStatusRequestDecoder exportersStatus = new ExportersStatusRequestDecoder();
    }
}
