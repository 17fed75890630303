package io.sluice.cli;

import tools.jackson.databind.JsonNode;

/** Reads the {@code brokerId}/{@code partitionId} of a target in the gateway's JSON. */
final class TargetPairs
{
    private TargetPairs()
    {
    }

    static TargetPair of(final JsonNode target)
    {
        return new TargetPair(target.path("brokerId").asInt(-1), target.path("partitionId").asInt(-1));
    }
}
