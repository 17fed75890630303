package io.sluice.qa.opensearch;

import io.sluice.exporter.opensearch.testing.OpenSearchNode;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.Json;
import io.sluice.qa.cluster.WrittenRecord;
import tools.jackson.databind.JsonNode;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** What an index of the OpenSearch node holds, read over plain HTTP (not through the client under test). */
public final class SearchIndex
{
    /** One document: its {@code _id} and the fixed fields of its source. */
    public record Document(String id, int partitionId, long position, String key, JsonNode payload)
    {
    }

    private final OpenSearchNode node;
    private final String index;

    public SearchIndex(final OpenSearchNode node, final String index)
    {
        this.node = node;
        this.index = index;
    }

    public long count()
    {
        return node.count(index);
    }

    /** Every document, in partition and position order (paged with search_after). */
    public List<Document> documents()
    {
        if (count() == 0)
        {
            return List.of();
        }
        final List<Document> documents = new ArrayList<>();
        String after = null;
        while (true)
        {
            final String body = "{\"size\":5000,\"sort\":[{\"partitionId\":\"asc\"},{\"position\":\"asc\"}]" +
                (after == null ? "" : ",\"search_after\":" + after) + "}";
            final HttpResponse<String> answer = node.request("POST", "/" + index + "/_search", body);
            if (answer.statusCode() != 200)
            {
                throw new IllegalStateException("search of " + index + ": " + answer.statusCode() + " " + answer.body());
            }
            final JsonNode hits = Json.parse(answer.body()).path("hits").path("hits");
            if (hits.isEmpty())
            {
                return documents;
            }
            for (final JsonNode hit : hits)
            {
                final JsonNode source = hit.path("_source");
                documents.add(new Document(hit.path("_id").asString(), source.path("partitionId").asInt(),
                    source.path("position").asLong(), source.path("key").isNull() ? null : source.path("key").asString(),
                    source.path("payload")));
                after = hit.path("sort").toString();
            }
        }
    }

    /** Waits until every written record has its document (and so the index is at least that large). */
    void awaitDocuments(final List<WrittenRecord> written, final Duration timeout)
    {
        final Set<String> expected = ids(written);
        Await.until(expected.size() + " documents of written records in " + index, timeout, () ->
        {
            if (count() < expected.size())
            {
                return false;
            }
            final Set<String> present = documents().stream().map(Document::id).collect(Collectors.toSet());
            return present.containsAll(expected);
        });
    }

    static Set<String> ids(final List<WrittenRecord> written)
    {
        return written.stream().map(r -> r.partitionId() + "-" + r.position()).collect(Collectors.toCollection(TreeSet::new));
    }

    /**
     * Asserts that the index holds a document for every written record with its key and payload, that each
     * document's id is its partition and position, and that per partition the positions run without a gap
     * from 1 (an index holds no duplicate id, so a record exported twice is one document).
     */
    List<Document> assertHoldsWithoutGaps(final List<WrittenRecord> written)
    {
        final List<Document> documents = documents();
        final Map<String, Document> byId = new TreeMap<>();
        for (final Document document : documents)
        {
            assertThat(document.id()).as("id of %s", document)
                .isEqualTo(document.partitionId() + "-" + document.position());
            assertThat(byId.put(document.id(), document)).as("a second document %s", document.id()).isNull();
        }
        for (final WrittenRecord record : written)
        {
            final Document document = byId.get(record.partitionId() + "-" + record.position());
            assertThat(document).as("document of %s", record).isNotNull();
            assertThat(document.key()).as("key of %s", document.id()).isEqualTo(record.key());
            assertThat(document.payload()).as("payload of %s", document.id()).isEqualTo(Json.parse(record.payloadJson()));
        }
        final Map<Integer, List<Long>> positions = new TreeMap<>();
        documents.forEach(d -> positions.computeIfAbsent(d.partitionId(), p -> new ArrayList<>()).add(d.position()));
        positions.forEach((partitionId, list) ->
        {
            for (int i = 0; i < list.size(); i++)
            {
                assertThat(list.get(i)).as("position %d of partition %d (a gap before it?)", i + 1, partitionId)
                    .isEqualTo(i + 1L);
            }
        });
        return documents;
    }
}
