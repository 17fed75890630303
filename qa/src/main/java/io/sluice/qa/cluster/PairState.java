package io.sluice.qa.cluster;

import io.sluice.protocol.cluster.PartitionReplica;

/**
 * One pair of {@code GET /actuator/exporting}: role, exporting state ({@code EXPORTING}, {@code PAUSED},
 * {@code SOFT_PAUSED}, {@code UNKNOWN}) and positions (-1 when absent).
 */
public record PairState(PartitionReplica pair, String role, String state, long exportedPosition, long lastPosition)
{
    public boolean isLeader()
    {
        return "LEADER".equals(role);
    }
}
