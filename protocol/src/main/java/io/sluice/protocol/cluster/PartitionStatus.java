package io.sluice.protocol.cluster;

import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;

import java.util.Map;

/**
 * One replica's view of its partition, as a broker reports it in a {@code TopologyResponse} and the gateway reads
 * it back. {@code leaderId} is -1 when no leader is known; positions are -1 when unknown;
 * {@code exporterPositions} maps exporter id to acknowledged position.
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
    Map<String, Long> exporterPositions,
    long firstPosition)
{
    /** A status without the first held position (a version 4 broker's): taken as 0, unknown. */
    public PartitionStatus(
        final int partitionId, final PartitionRole role, final long term, final int leaderId,
        final ExportingState exportingState, final long exportingStateVersion, final long lastPosition,
        final long exportedPosition, final Map<String, Long> exporterPositions)
    {
        this(partitionId, role, term, leaderId, exportingState, exportingStateVersion, lastPosition, exportedPosition,
            exporterPositions, 0);
    }
}
