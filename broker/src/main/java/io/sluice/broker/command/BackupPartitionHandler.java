package io.sluice.broker.command;

import io.sluice.broker.backup.PartitionBackups;
import io.sluice.broker.control.BackupHold;
import io.sluice.broker.errors.PartitionException;
import io.sluice.broker.partition.Partition;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.BackupPartitionRequestDecoder;
import io.sluice.protocol.transport.ResponseChannel;

import java.util.concurrent.CompletableFuture;

/**
 * A partition's part of a backup, served by its leader ({@link PartitionBackups#capture}); a follower names the
 * leader. The snapshot and the links run on the admin executor, off the I/O thread.
 */
final class BackupPartitionHandler extends DecodingHandler<BackupPartitionRequestDecoder>
{
    /** Bound on the snapshot a capture takes: it writes the partition's state and seals one segment. */
    static final long SNAPSHOT_TIMEOUT_MS = 10_000;

    BackupPartitionHandler(final CommandContext context)
    {
        super(context, BackupPartitionRequestDecoder::new);
    }

    @Override
    void handle(
        final BackupPartitionRequestDecoder request, final int blockLength, final int version,
        final ResponseChannel response)
    {
        final int partitionId = request.partitionId();
        final long backupId = request.backupId();
        if (backupId < 1)
        {
            context.invalid(response, partitionId, context.pair(partitionId) + ": backup id must be positive, was " +
                backupId);
            return;
        }
        if (context.backups == null)
        {
            context.invalid(response, partitionId, "broker " + context.brokerId + " takes no backups");
            return;
        }
        final Partition partition = context.leaderOrRespond(partitionId, response);
        if (partition == null)
        {
            return;
        }
        // The positions captured are the ones the backup's sink snapshots hold only while its hold is in place: checked
        // before the capture and after it (a hold that ended meanwhile may have let a position move into the capture).
        if (!context.backupHolds.holds(backupId))
        {
            context.respondError(response, partitionId, holdGone(partitionId, backupId));
            return;
        }
        final long timeoutMs = SNAPSHOT_TIMEOUT_MS;
        final CompletableFuture<PartitionBackups.Captured> captured = context.onAdminExecutor(partitionId, response,
            () -> context.backups.capture(partition, backupId, timeoutMs).thenApply((c) ->
            {
                if (!context.backupHolds.holds(backupId))
                {
                    throw holdGone(partitionId, backupId);
                }
                return c;
            }));
        if (captured != null)
        {
            context.respondWhenDone(captured, response, partitionId, ResponseWriters::backupPartition);
        }
    }

    private PartitionException holdGone(final int partitionId, final long backupId)
    {
        final BackupHold held = context.backupHolds.held();
        return new PartitionException(ErrorCode.CONFLICT, partitionId, -1, context.pair(partitionId) +
            ": the hold of backup " + backupId + " is not in place (" + (held == null ? "no hold: it ended or its " +
            "lease ran out" : "backup " + held.backupId() + " holds") + ")");
    }
}
