package io.sluice.exporter.opensearch;

import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterFactory;

import java.time.Duration;

/** The {@code opensearch} kind, found by the broker through {@code ServiceLoader}. */
public final class OpenSearchExporterFactory implements ExporterFactory
{
    @Override
    public String type()
    {
        return OpenSearchExporter.TYPE;
    }

    @Override
    public Exporter create()
    {
        return new OpenSearchExporter();
    }

    @Override
    public void validate(final ExporterContext context)
    {
        OpenSearchExporterConfig.from(context.settings());
    }

    /** A search cluster that is down (or rejecting with 429) is asked at most every 30 s (CONTRACT §4). */
    @Override
    public Duration defaultRetryMaxBackoff()
    {
        return Duration.ofSeconds(30);
    }
}
