package io.sluice.exporter.kafka;

import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterFactory;

/** The {@code kafka} kind, found by the broker through {@code ServiceLoader}. */
public final class KafkaExporterFactory implements ExporterFactory
{
    @Override
    public String type()
    {
        return KafkaExporter.TYPE;
    }

    @Override
    public Exporter create()
    {
        return new KafkaExporter();
    }

    @Override
    public void validate(final ExporterContext context)
    {
        KafkaExporterConfig.from(context.settings());
    }
}
