package io.sluice.broker.command;

import io.sluice.broker.backfill.BackfillCommandHandler;
import io.sluice.protocol.codecs.BackfillStatusRequestDecoder;
import io.sluice.protocol.transport.ResponseChannel;

/** The state of one backfill's tasks on a partition, served by its leader. */
final class BackfillStatusHandler extends DecodingHandler<BackfillStatusRequestDecoder>
{
    BackfillStatusHandler(final CommandContext context)
    {
        super(context, BackfillStatusRequestDecoder::new);
    }

    @Override
    void handle(
        final BackfillStatusRequestDecoder request, final int blockLength, final int version, final ResponseChannel response)
    {
        final int partitionId = request.partitionId();
        final String backfillId = context.text(request.backfillIdLength(), request::backfillId, partitionId, response);
        final BackfillCommandHandler backfills = context.backfillsOnLeader(partitionId, backfillId, response);
        if (backfills != null)
        {
            backfills.onStatus(partitionId, backfillId, response);
        }
    }
}
