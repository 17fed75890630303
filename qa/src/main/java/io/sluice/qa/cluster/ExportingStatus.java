package io.sluice.qa.cluster;

import io.sluice.protocol.cluster.PartitionReplica;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** {@code GET /actuator/exporting}, parsed (CONTRACT §3). */
public record ExportingStatus(HttpAnswer http, String state, List<PairState> targets)
{
    static ExportingStatus parse(final HttpAnswer http)
    {
        if (http.status() != 200)
        {
            return new ExportingStatus(http, null, List.of());
        }
        final JsonNode json = http.json();
        final List<PairState> targets = new ArrayList<>();
        for (final JsonNode target : json.path("targets"))
        {
            targets.add(new PairState(
                new PartitionReplica(target.path("brokerId").asInt(-1), target.path("partitionId").asInt(-1)),
                target.path("role").asString(null),
                target.path("state").asString(null),
                positionOf(target.path("exportedPosition")),
                positionOf(target.path("lastPosition"))));
        }
        return new ExportingStatus(http, json.path("state").asString(null), List.copyOf(targets));
    }

    public Optional<PairState> pair(final int brokerId, final int partitionId)
    {
        return targets.stream()
            .filter(target -> target.pair().brokerId() == brokerId && target.pair().partitionId() == partitionId)
            .findFirst();
    }

    /** The broker reported as leader of the partition, if exactly one is. */
    public Optional<Integer> leaderOf(final int partitionId)
    {
        final List<Integer> leaders = targets.stream()
            .filter(target -> target.pair().partitionId() == partitionId && target.isLeader())
            .map(target -> target.pair().brokerId())
            .toList();
        return leaders.size() == 1 ? Optional.of(leaders.get(0)) : Optional.empty();
    }

    private static long positionOf(final JsonNode node)
    {
        return node.isNumber() ? node.asLong() : -1L;
    }

    @Override
    public String toString()
    {
        return http.toString();
    }
}
