package io.sluice.gateway.broker;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.ExportingState;

/**
 * A replica's exporting state as it answered an admin request. Positions are -1 when unknown; {@code hold} the times of
 * the state (when it began, when its lease ends).
 */
public record AdminResult(
    PartitionReplica replica, ExportingState state, long version, long exportedPosition, long lastPosition,
    io.sluice.protocol.cluster.ExportingHold hold)
{
    public AdminResult
    {
        hold = hold == null ? io.sluice.protocol.cluster.ExportingHold.NONE : hold;
    }

    /** Without times. */
    public AdminResult(
        final PartitionReplica replica, final ExportingState state, final long version, final long exportedPosition,
        final long lastPosition)
    {
        this(replica, state, version, exportedPosition, lastPosition, io.sluice.protocol.cluster.ExportingHold.NONE);
    }
}
