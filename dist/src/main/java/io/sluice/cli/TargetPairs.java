package io.sluice.cli;

import io.sluice.protocol.cluster.PartitionReplica;
import tools.jackson.databind.JsonNode;

/** Reads the {@code brokerId}/{@code partitionId} of a target in the gateway's JSON. */
final class TargetPairs
{
    private TargetPairs()
    {
    }

    static PartitionReplica of(final JsonNode target)
    {
        return new PartitionReplica(target.path("brokerId").asInt(-1), target.path("partitionId").asInt(-1));
    }
}
