package io.sluice.broker.command;

import io.sluice.broker.control.BackupHold;
import io.sluice.protocol.codecs.BackupHoldRequestDecoder;
import io.sluice.protocol.transport.ResponseChannel;

import java.util.concurrent.CompletableFuture;

/**
 * A backup's hold on acknowledgements ({@link io.sluice.broker.control.BackupHolds}), served by any broker: TAKE and
 * RELEASE commit through the control group, OBEY answers for one pair of this broker once its exporters obey the
 * hold. The work runs on the admin executor, off the I/O thread.
 */
final class BackupHoldHandler extends DecodingHandler<BackupHoldRequestDecoder>
{
    BackupHoldHandler(final CommandContext context)
    {
        super(context, BackupHoldRequestDecoder::new);
    }

    @Override
    void handle(final BackupHoldRequestDecoder request, final int blockLength, final int version, final ResponseChannel response)
    {
        if (context.blockTooShort(response, "backup hold request", blockLength, BackupHoldRequestDecoder.BLOCK_LENGTH))
        {
            return;
        }
        final long backupId = request.backupId();
        final int partitionId = request.partitionId();
        final long leaseMillis = request.leaseMillis();
        if (backupId < 1)
        {
            context.invalid(response, partitionId, "broker " + context.brokerId + ": a backup id is positive, was " +
                backupId);
            return;
        }
        final CompletableFuture<BackupHold> done;
        switch (request.action())
        {
            case TAKE ->
            {
                if (leaseMillis < 1)
                {
                    context.invalid(response, 0, "broker " + context.brokerId + ": a backup hold's lease is positive, was " +
                        leaseMillis + " ms");
                    return;
                }
                done = context.onAdminExecutor(0, response, () -> context.backupHolds.take(backupId, leaseMillis));
            }
            case RELEASE -> done = context.onAdminExecutor(0, response, () -> context.backupHolds.release(backupId));
            case OBEY ->
            {
                if (context.partitionOrRespond(partitionId, response) == null)
                {
                    return;
                }
                done = context.onAdminExecutor(partitionId, response,
                    () -> context.backupHolds.obeyed(partitionId, backupId));
            }
            default ->
            {
                context.malformed(response, partitionId, "broker " + context.brokerId + ": unknown backup hold action " +
                    request.actionRaw());
                return;
            }
        }
        if (done != null)
        {
            context.respondWhenDone(done, response, partitionId,
                (held) -> ResponseWriters.backupHold(held, partitionId, context.brokerId));
        }
    }
}
