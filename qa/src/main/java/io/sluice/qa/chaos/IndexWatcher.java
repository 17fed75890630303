package io.sluice.qa.chaos;

import io.sluice.exporter.opensearch.testing.OpenSearchNode;
import io.sluice.qa.cluster.Json;
import tools.jackson.databind.JsonNode;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Watches the OpenSearch exporter's index (the {@code opensearch} profile) as {@link ExportWatcher} watches the files:
 * each poll refreshes the index, then searches each partition's documents above the highest position seen without a
 * gap. A document first found by a poll was indexed after the start of the previous poll's refresh (it was not
 * searchable after that refresh) and at or before the end of this poll's search. The index holds one document per
 * position ({@code _id} = partition-position), so a record exported again is seen once; its lines are numbered in the
 * order found.
 */
final class IndexWatcher
{
    private final OpenSearchNode node;
    private final String index;
    private final int partitions;
    private final HistoryRecorder clock;
    private final List<Export> exports = new ArrayList<>();
    private final Map<Integer, Set<Long>> seen = new HashMap<>();
    private final Map<Integer, Long> contiguous = new HashMap<>();
    private final Map<Integer, Integer> lines = new HashMap<>();
    private long lastRefreshStart;

    IndexWatcher(final OpenSearchNode node, final String index, final int partitions, final HistoryRecorder clock)
    {
        this.node = node;
        this.index = index;
        this.partitions = partitions;
        this.clock = clock;
    }

    synchronized void poll()
    {
        final long start = clock.now();
        if (node.request("POST", "/" + index + "/_refresh", null).statusCode() != 200)
        {
            return; // no index yet: nothing exported
        }
        final List<JsonNode> found = new ArrayList<>();
        for (int partitionId = 1; partitionId <= partitions; partitionId++)
        {
            final long above = contiguous.getOrDefault(partitionId, 0L);
            final HttpResponse<String> answer = node.request("POST", "/" + index + "/_search", "{\"size\":10000," +
                "\"sort\":[{\"position\":\"asc\"}],\"query\":{\"bool\":{\"filter\":[{\"term\":{\"partitionId\":" +
                partitionId + "}},{\"range\":{\"position\":{\"gt\":" + above + "}}}]}}}");
            if (answer.statusCode() != 200)
            {
                throw new IllegalStateException("search of " + index + " answered " + answer.statusCode() + ": " + answer.body());
            }
            Json.parse(answer.body()).path("hits").path("hits").forEach(hit -> found.add(hit.path("_source")));
        }
        final long end = clock.now();
        for (final JsonNode source : found)
        {
            final int partitionId = source.path("partitionId").asInt(-1);
            final long position = source.path("position").asLong(-1);
            if (!seen.computeIfAbsent(partitionId, p -> new HashSet<>()).add(position))
            {
                continue;
            }
            final JsonNode w = source.path("payload").path("w");
            exports.add(new Export(partitionId, position, w.isString() ? w.asString() : null,
                lines.merge(partitionId, 1, Integer::sum), lastRefreshStart, end));
            long next = contiguous.getOrDefault(partitionId, 0L);
            while (seen.get(partitionId).contains(next + 1))
            {
                next++;
            }
            contiguous.put(partitionId, next);
        }
        lastRefreshStart = start;
    }

    synchronized List<Export> exports()
    {
        return List.copyOf(exports);
    }
}
