package io.sluice.broker.command;

import io.sluice.broker.backfill.BackfillCommandHandler;
import io.sluice.protocol.codecs.CancelBackfillRequestDecoder;
import io.sluice.protocol.transport.ResponseChannel;

/** The cancellation of one backfill on a partition, served by its leader. */
final class BackfillCancelHandler extends DecodingHandler<CancelBackfillRequestDecoder>
{
    BackfillCancelHandler(final CommandContext context)
    {
        super(context, CancelBackfillRequestDecoder::new);
    }

    @Override
    void handle(
        final CancelBackfillRequestDecoder request, final int blockLength, final int version, final ResponseChannel response)
    {
        final int partitionId = request.partitionId();
        final String backfillId = context.text(request.backfillIdLength(), request::backfillId, partitionId, response);
        final BackfillCommandHandler backfills = context.backfillsOnLeader(partitionId, backfillId, response);
        if (backfills != null)
        {
            backfills.onCancel(partitionId, backfillId, response);
        }
    }
}
