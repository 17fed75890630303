package io.sluice.broker.command;

import io.sluice.broker.disk.DiskGuard;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.TopologyRequestDecoder;
import io.sluice.protocol.codecs.TopologyResponseEncoder;
import io.sluice.protocol.transport.ResponseChannel;

import java.util.ArrayList;
import java.util.List;

/** This broker's view of the cluster: every partition replica's status, the control group's leader and the disk. */
final class TopologyHandler extends DecodingHandler<TopologyRequestDecoder>
{
    TopologyHandler(final CommandContext context)
    {
        super(context, TopologyRequestDecoder::new);
    }

    @Override
    void handle(
        final TopologyRequestDecoder request, final int blockLength, final int version, final ResponseChannel response)
    {
        if (context.namesAnotherBroker(request.brokerId(), TopologyRequestDecoder.brokerIdNullValue(), "topology",
            response))
        {
            return;
        }
        final List<PartitionStatus> statuses = new ArrayList<>(context.partitions.size());
        context.partitions.keySet().stream().sorted().forEach((id) -> statuses.add(context.partitions.get(id).status()));
        final DiskGuard disk = context.diskGuard;
        response.respond(ResponseWriters.topology(context.brokerId, context.control.leaderId(),
            context.control.caughtUp(), statuses,
            disk == null ? TopologyResponseEncoder.diskUsedRatioNullValue() : disk.usedRatio(),
            disk == null ? TopologyResponseEncoder.diskFreeBytesNullValue() : disk.freeBytes(),
            disk == null ? 0 : disk.appendsRefused(),
            context.control.state().leaseExpiries()));
    }
}
