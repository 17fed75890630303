package io.sluice.gateway.broker;

import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;

import java.util.List;
import java.util.Map;

/** One broker's answer to a topology request. */
public record BrokerTopology(int brokerId, List<PartitionStatus> partitions)
{
    /**
     * The broker's view of one partition it hosts. {@code leaderId} is -1 when no leader is known;
     * positions are -1 when unknown; {@code exporterPositions} maps exporter id to acknowledged position.
     */
    public record PartitionStatus(
        int partitionId,
        PartitionRole role,
        long term,
        int leaderId,
        ExportingState exportingState,
        long exportingStateVersion,
        long lastPosition,
        long exportedPosition,
        Map<String, Long> exporterPositions)
    {
    }
}
