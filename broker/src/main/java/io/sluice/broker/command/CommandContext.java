package io.sluice.broker.command;

import io.sluice.broker.backfill.BackfillCommandHandler;
import io.sluice.broker.backfill.BackfillMessages;
import io.sluice.broker.backup.PartitionBackups;
import io.sluice.broker.backup.SinkBackups;
import io.sluice.broker.control.BackupHolds;
import io.sluice.broker.control.BackfillClaims;
import io.sluice.broker.control.ControlGroup;
import io.sluice.broker.control.ExportingControl;
import io.sluice.broker.disk.DiskGuard;
import io.sluice.broker.partition.Partition;
import io.sluice.broker.errors.PartitionException;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.concurrent.Futures;
import io.sluice.protocol.message.ErrorResponseWriter;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.ResponseChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What every request handler of a broker shares: the broker's parts a request reaches, and the answers every kind
 * gives alike (the partition not here, not the leader, a failure, a malformed field). Thread-safe: immutable.
 */
final class CommandContext
{
    private static final Logger LOG = LoggerFactory.getLogger(CommandApi.class);

    final int brokerId;
    final PartitionDistribution distribution;
    final Map<Integer, Partition> partitions;
    final ControlGroup control;
    final ExportingControl exportingControl;
    final BackfillClaims backfillClaims;
    final Executor adminExecutor;
    final Clock clock;
    /** Null in a broker without a disk guard: appends are never refused for disk then. */
    final DiskGuard diskGuard;
    /** Null in a broker without backups: a backup request is refused then. */
    final PartitionBackups backups;
    /** Backups' holds on acknowledgements, in the control group. */
    final BackupHolds backupHolds;
    /** Null in a broker without backups: a sink snapshot request is refused then. */
    final SinkBackups sinkBackups;

    CommandContext(
        final int brokerId,
        final PartitionDistribution distribution,
        final Map<Integer, Partition> partitions,
        final ControlGroup control,
        final ExportingControl exportingControl,
        final BackfillClaims backfillClaims,
        final Executor adminExecutor,
        final Clock clock,
        final DiskGuard diskGuard,
        final PartitionBackups backups,
        final BackupHolds backupHolds,
        final SinkBackups sinkBackups)
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
        this.backups = backups;
        this.backupHolds = backupHolds;
        this.sinkBackups = sinkBackups;
    }

    /** "partition 3 on broker 1", how errors name a pair. */
    String pair(final int partitionId)
    {
        return "partition " + partitionId + " on broker " + brokerId;
    }

    /** The partition if this broker hosts it; otherwise answers NOT_MEMBER or PARTITION_NOT_FOUND and returns null. */
    Partition partitionOrRespond(final int partitionId, final ResponseChannel response)
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

    /** The partition if this broker hosts and leads it; otherwise answers the error (naming the leader) and returns null. */
    Partition leaderOrRespond(final int partitionId, final ResponseChannel response)
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

    /**
     * The backfills of a partition this broker leads, for a request naming one backfill; null when the id was null
     * (already answered) or the partition is not led here (answered naming the leader).
     */
    BackfillCommandHandler backfillsOnLeader(final int partitionId, final String backfillId, final ResponseChannel response)
    {
        final Partition partition = backfillId == null ? null : leaderOrRespond(partitionId, response);
        return partition == null ? null : partition.backfills().handler();
    }

    /**
     * Starts {@code work} on the admin executor, off the transport's I/O thread; answers UNAVAILABLE and returns
     * null when the broker is shutting down (the executor refuses work).
     */
    <T> CompletableFuture<T> onAdminExecutor(
        final int partitionId, final ResponseChannel response, final Supplier<CompletableFuture<T>> work)
    {
        try
        {
            return CompletableFuture.supplyAsync(work, adminExecutor).thenCompose((f) -> f);
        }
        catch (final RejectedExecutionException e)
        {
            response.respond(ErrorResponseWriter.of(ErrorCode.UNAVAILABLE, partitionId, ErrorResponseWriter.NO_LEADER,
                pair(partitionId) + ": broker is shutting down"));
            return null;
        }
    }

    /**
     * Whether a request that may name a broker ({@code noBroker}: it names none, so it is for any) names another
     * than this one; then it is answered NOT_MEMBER.
     */
    boolean namesAnotherBroker(final int requestBroker, final int noBroker, final String what, final ResponseChannel response)
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
    <T> void respondWhenDone(
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

    /** A {@link PartitionException}'s code and leader, or INTERNAL_ERROR (logged) for anything else. */
    void respondError(final ResponseChannel response, final int partitionId, final Throwable error)
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
                pair(partitionId) + ": " + cause));
        }
    }

    void invalid(final ResponseChannel response, final int partitionId, final String message)
    {
        response.respond(ErrorResponseWriter.of(ErrorCode.INVALID_ARGUMENT, partitionId,
            ErrorResponseWriter.NO_LEADER, message));
    }

    void malformed(final ResponseChannel response, final int partitionId, final String message)
    {
        response.respond(ErrorResponseWriter.of(ErrorCode.MALFORMED_REQUEST, partitionId,
            ErrorResponseWriter.NO_LEADER, message));
    }

    /** Answers MALFORMED_REQUEST when a message's block is shorter than the fields this version reads from it. */
    boolean blockTooShort(final ResponseChannel response, final String what, final int blockLength, final int known)
    {
        if (blockLength >= known)
        {
            return false;
        }
        malformed(response, 0, "broker " + brokerId + ": a " + what + " with a block of " + blockLength + " bytes, " +
            known + " expected");
        return true;
    }

    /** The next text field, or null after answering MALFORMED_REQUEST when it is longer than a backfill may hold. */
    String text(final long length, final Supplier<String> read, final int partitionId, final ResponseChannel response)
    {
        if (length > BackfillMessages.MAX_STRING_BYTES)
        {
            malformed(response, partitionId, "broker " + brokerId + ": a text field of " + length +
                " bytes exceeds the " + BackfillMessages.MAX_STRING_BYTES + " a backfill may hold");
            return null;
        }
        return read.get();
    }
}
