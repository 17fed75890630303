package io.sluice.broker.command;

import io.sluice.broker.control.ExportingChange;
import io.sluice.broker.partition.Partition;
import io.sluice.protocol.codecs.AdminRequestDecoder;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.OperationScope;
import io.sluice.protocol.message.AdminLimits;
import io.sluice.protocol.message.ErrorResponseWriter;
import io.sluice.protocol.transport.ResponseChannel;

import java.time.Instant;
import java.util.BitSet;
import java.util.concurrent.CompletableFuture;

/**
 * A pause, soft pause or resume of one (broker, partition) pair: checks the kind, the broker, the version against
 * this broker's clock and the whole operation's partitions, then runs {@link
 * io.sluice.broker.control.ExportingControl#change} on the admin executor and answers with the state the replica holds.
 */
final class AdminHandler extends DecodingHandler<AdminRequestDecoder>
{
    AdminHandler(final CommandContext context)
    {
        super(context, AdminRequestDecoder::new);
    }

    @Override
    void handle(
        final AdminRequestDecoder request, final int blockLength, final int version, final ResponseChannel response)
    {
        final int requestBroker = request.brokerId();
        final int partitionId = request.partitionId();
        final long stateVersion = request.version();
        final ExportingState target = switch (request.kind())
        {
            case PAUSE_EXPORTING -> ExportingState.PAUSED;
            case SOFT_PAUSE_EXPORTING -> ExportingState.SOFT_PAUSED;
            case RESUME_EXPORTING -> ExportingState.EXPORTING;
            default -> null;
        };
        if (target == null)
        {
            context.malformed(response, partitionId, context.pair(partitionId) +
                ": unknown admin request kind " + request.kindRaw());
            return;
        }
        // Absent (null) before schema version 1: a sender that does not say is not waited for.
        final short leaderTargeted = request.leaderTargetedRaw();
        if (leaderTargeted != BooleanType.TRUE.value() && leaderTargeted != BooleanType.FALSE.value() &&
            leaderTargeted != BooleanType.NULL_VAL.value())
        {
            context.malformed(response, partitionId, context.pair(partitionId) +
                ": admin request leaderTargeted is " + request.leaderTargetedRaw() + ", not 0 or 1");
            return;
        }
        if (requestBroker != context.brokerId)
        {
            response.respond(ErrorResponseWriter.of(ErrorCode.NOT_MEMBER, partitionId, ErrorResponseWriter.NO_LEADER,
                "admin request for broker " + requestBroker + " reached broker " + context.brokerId));
            return;
        }
        final Partition partition = context.partitionOrRespond(partitionId, response);
        if (partition == null)
        {
            return;
        }
        final long maxVersion = AdminLimits.maxVersionAt(epochMicros(context.clock.instant()));
        if (stateVersion > maxVersion)
        {
            context.invalid(response, partitionId, context.pair(partitionId) + ": exporting version " +
                stateVersion + " is more than " + AdminLimits.MAX_VERSION_AHEAD.toMinutes() + " minutes ahead of this " +
                "broker's clock (at most " + maxVersion + " now); check the gateway's clock");
            return;
        }
        final ExportingChange operation = operationOf(request, partitionId, target, stateVersion, response);
        if (operation == null)
        {
            return;
        }
        // Absent before protocol version 5 (the null value): no lease.
        final long leaseMicros = request.leaseMicros() == AdminRequestDecoder.leaseMicrosNullValue() ? 0 :
            request.leaseMicros();
        if (leaseMicros < 0 || (leaseMicros > 0 && target == ExportingState.EXPORTING))
        {
            context.invalid(response, partitionId, context.pair(partitionId) + ": lease of " +
                leaseMicros + " µs with " + target + ": a lease is positive and only for a pause");
            return;
        }
        final ExportingChange change = operation.withLease(leaseMicros);
        final boolean leaderAsked = leaderTargeted == BooleanType.TRUE.value();
        final CompletableFuture<Void> changed = context.onAdminExecutor(partitionId, response,
            () -> context.exportingControl.change(partitionId, change, leaderAsked));
        if (changed == null)
        {
            return;
        }
        context.respondWhenDone(changed, response, partitionId,
            (ignored) -> ResponseWriters.admin(context.brokerId, partition.status()));
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
        final String pair = context.pair(partitionId);
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
                    context.malformed(response, partitionId, pair + ": an admin request for every partition lists " +
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
                    if (!context.distribution.isPartition(p.partitionId()))
                    {
                        context.malformed(response, partitionId, pair + ": the operation lists partition " +
                            p.partitionId() + ", not one of 1.." + context.distribution.partitionCount());
                        return null;
                    }
                    partitionIds.set(p.partitionId());
                }
                if (!partitionIds.get(partitionId))
                {
                    context.malformed(response, partitionId, pair + ": the operation's partitions " + partitionIds +
                        " leave out the request's own");
                    return null;
                }
                return new ExportingChange(version, target, false, partitionIds);
            }
            default ->
            {
                context.malformed(response, partitionId, pair + ": unknown operation scope " +
                    request.operationScopeRaw());
                return null;
            }
        }
    }

    private static long epochMicros(final Instant instant)
    {
        return instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1_000L;
    }
}
