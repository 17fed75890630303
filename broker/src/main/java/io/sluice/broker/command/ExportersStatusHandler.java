package io.sluice.broker.command;

import io.sluice.broker.partition.Partition;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.ExportersStatusRequestDecoder;
import io.sluice.protocol.transport.ResponseChannel;

/** The exporters of a partition: the leader's view, since only its director runs them; a follower names the leader. */
final class ExportersStatusHandler extends DecodingHandler<ExportersStatusRequestDecoder>
{
    ExportersStatusHandler(final CommandContext context)
    {
        super(context, ExportersStatusRequestDecoder::new);
    }

    @Override
    void handle(
        final ExportersStatusRequestDecoder request, final int blockLength, final int version, final ResponseChannel response)
    {
        final int partitionId = request.partitionId();
        final Partition partition = context.leaderOrRespond(partitionId, response);
        if (partition == null)
        {
            return;
        }
        final PartitionStatus status = partition.status();
        response.respond(ResponseWriters.exportersStatus(partitionId, status.exportingState(), status.lastPosition(),
            partition.director().exporterStatuses()));
    }
}
