package io.sluice.broker.exporter;

import java.util.Map;
import java.util.Objects;

/**
 * One configured exporter ({@code sluice.exporters.<id>.*}): its id, its kind ({@code type}) and the kind's
 * properties (for {@code file}: {@code path}).
 */
public record ExporterConfig(String id, String type, Map<String, String> properties)
{
    public ExporterConfig
    {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(type, "type");
        properties = properties == null ? Map.of() : Map.copyOf(properties);
    }

    /** The default configuration: exporter {@code file} of type {@code file}. */
    public static Map<String, ExporterConfig> defaults()
    {
        return Map.of(FileExporter.TYPE, new ExporterConfig(FileExporter.TYPE, FileExporter.TYPE, Map.of()));
    }
}
