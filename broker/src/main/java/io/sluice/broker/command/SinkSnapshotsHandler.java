package io.sluice.broker.command;

import io.sluice.protocol.codecs.SinkSnapshotsRequestDecoder;
import io.sluice.protocol.transport.ResponseChannel;

/**
 * The sinks' snapshots of a backup ({@link io.sluice.broker.backup.SinkBackups}), served by any broker: TAKE while the
 * backup's hold is in place, CHECK for a verify.
 */
final class SinkSnapshotsHandler extends DecodingHandler<SinkSnapshotsRequestDecoder>
{
    SinkSnapshotsHandler(final CommandContext context)
    {
        super(context, SinkSnapshotsRequestDecoder::new);
    }

    @Override
    void handle(
        final SinkSnapshotsRequestDecoder request, final int blockLength, final int version, final ResponseChannel response)
    {
        if (context.blockTooShort(response, "sink snapshots request", blockLength, SinkSnapshotsRequestDecoder.BLOCK_LENGTH))
        {
            return;
        }
        final long backupId = request.backupId();
        final long timeoutMillis = request.timeoutMillis();
        if (backupId < 1 || timeoutMillis < 1)
        {
            context.invalid(response, 0, "broker " + context.brokerId + ": a backup id and a timeout are positive, were " +
                backupId + " and " + timeoutMillis + " ms");
            return;
        }
        if (context.sinkBackups == null)
        {
            context.invalid(response, 0, "broker " + context.brokerId + " takes no sink snapshots");
            return;
        }
        final boolean take;
        switch (request.action())
        {
            case TAKE -> take = true;
            case CHECK -> take = false;
            default ->
            {
                context.malformed(response, 0, "broker " + context.brokerId + ": unknown sink snapshot action " +
                    request.actionRaw());
                return;
            }
        }
        context.respondWhenDone(context.sinkBackups.snapshots(backupId, take, timeoutMillis), response, 0,
            (sinks) -> ResponseWriters.sinkSnapshots(context.brokerId, sinks));
    }
}
