package io.sluice.protocol.cluster;

import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;

import java.util.Map;

/**
 * One replica's view of its partition, as a broker reports it in a {@code TopologyResponse} and the gateway reads
 * it back. {@code leaderId} is -1 when no leader is known; positions are -1 when unknown;
 * {@code exporterPositions} maps exporter id to acknowledged position; {@code firstPosition} the lowest position
 * the replica still holds (0: unknown); {@code hold} the times of the exporting state
 * (when it began, when its pause lease ends or ended). {@code exportedPosition} is the lowest acknowledged position
 * over the exporters; {@code sentPosition} the lowest position sent to their sinks, only known where they run (the
 * leader), -1 elsewhere.
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
    long firstPosition,
    ExportingHold hold,
    long sentPosition)
{
    public PartitionStatus
    {
        hold = hold == null ? ExportingHold.NONE : hold;
    }

    /** Without a sent position (a follower's, or a version 4 broker's). */
    public PartitionStatus(
        final int partitionId,
        final PartitionRole role,
        final long term,
        final int leaderId,
        final ExportingState exportingState,
        final long exportingStateVersion,
        final long lastPosition,
        final long exportedPosition,
        final Map<String, Long> exporterPositions,
        final long firstPosition,
        final ExportingHold hold)
    {
        this(partitionId, role, term, leaderId, exportingState, exportingStateVersion, lastPosition, exportedPosition,
            exporterPositions, firstPosition, hold, -1);
    }

    /** Without the first held position (a version 4 broker's: taken as 0, unknown) and without times. */
    public PartitionStatus(
        final int partitionId,
        final PartitionRole role,
        final long term,
        final int leaderId,
        final ExportingState exportingState,
        final long exportingStateVersion,
        final long lastPosition,
        final long exportedPosition,
        final Map<String, Long> exporterPositions)
    {
        this(partitionId, role, term, leaderId, exportingState, exportingStateVersion, lastPosition, exportedPosition,
            exporterPositions, 0, ExportingHold.NONE, -1);
    }
}
