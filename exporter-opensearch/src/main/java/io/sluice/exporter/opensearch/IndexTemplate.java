package io.sluice.exporter.opensearch;

import org.opensearch.client.opensearch.OpenSearchClient;

import java.io.IOException;

/**
 * The index template of the exporter's index: typed mappings for the fixed fields of a record's JSON (the
 * payload stays dynamic). Putting it again replaces it with the same content, so every exporter instance puts
 * it before its first bulk.
 */
public final class IndexTemplate
{
    private IndexTemplate()
    {
    }

    public static String name(final String index)
    {
        return "sluice-" + index;
    }

    public static void put(final OpenSearchClient client, final String index) throws IOException
    {
        client.indices().putIndexTemplate(template -> template
            .name(name(index))
            .indexPatterns(index)
            .template(mapping -> mapping.mappings(mappings -> mappings
                .properties("partitionId", property -> property.long_(type -> type))
                .properties("position", property -> property.long_(type -> type))
                .properties("key", property -> property.keyword(type -> type))
                .properties("timestamp", property -> property.date(type -> type.format("epoch_millis"))))));
    }
}
