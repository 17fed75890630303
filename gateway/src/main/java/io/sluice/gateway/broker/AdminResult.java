package io.sluice.gateway.broker;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.ExportingState;

/** A replica's exporting state as it answered an admin request. Positions are -1 when unknown. */
public record AdminResult(
    PartitionReplica replica, ExportingState state, long version, long exportedPosition, long lastPosition)
{
}
