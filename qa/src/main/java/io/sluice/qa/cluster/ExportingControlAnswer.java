package io.sluice.qa.cluster;

import io.sluice.protocol.cluster.PartitionReplica;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/** The answer of {@code POST /actuator/exporting/{pause,resume}}, parsed (CONTRACT §3). */
public record ExportingControlAnswer(
    HttpAnswer http, String operation, String result, List<PairOutcome> targets)
{
    static ExportingControlAnswer parse(final HttpAnswer http)
    {
        if (http.body() == null || http.body().isBlank() || http.body().trim().charAt(0) != '{')
        {
            return new ExportingControlAnswer(http, null, null, List.of());
        }
        final JsonNode json = http.json();
        final List<PairOutcome> targets = new ArrayList<>();
        for (final JsonNode target : json.path("targets"))
        {
            targets.add(new PairOutcome(
                new PartitionReplica(target.path("brokerId").asInt(-1), target.path("partitionId").asInt(-1)),
                target.path("outcome").asString(null),
                target.path("error").asString(null)));
        }
        return new ExportingControlAnswer(
            http, json.path("operation").asString(null), json.path("result").asString(null), List.copyOf(targets));
    }

    public int status()
    {
        return http.status();
    }

    /** Pairs whose outcome is {@code outcome}. */
    public Set<PartitionReplica> pairsWithOutcome(final String outcome)
    {
        final Set<PartitionReplica> pairs = new TreeSet<>();
        for (final PairOutcome target : targets)
        {
            if (outcome.equals(target.outcome()))
            {
                pairs.add(target.pair());
            }
        }
        return pairs;
    }

    public Set<PartitionReplica> pairs()
    {
        final Set<PartitionReplica> pairs = new TreeSet<>();
        targets.forEach(target -> pairs.add(target.pair()));
        return pairs;
    }

    @Override
    public String toString()
    {
        return http.toString();
    }
}
