package io.sluice.broker.exporter;

import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterFactory;

/** The {@code file} kind, found through {@code ServiceLoader} like every other kind. */
public final class FileExporterFactory implements ExporterFactory
{
    @Override
    public String type()
    {
        return FileExporter.TYPE;
    }

    @Override
    public Exporter create()
    {
        return new FileExporter();
    }
}
