package io.sluice.broker.exporter;

import io.sluice.exporter.spi.Exporter;
import io.sluice.protocol.cluster.InvalidClusterConfigException;

import java.util.Map;
import java.util.function.Supplier;

/** Builds exporter instances by {@code type}; the built-in type is {@code file}. Thread-safe. */
public final class ExporterRegistry
{
    private final Map<String, Supplier<Exporter>> factories;

    public ExporterRegistry(final Map<String, Supplier<Exporter>> factories)
    {
        this.factories = Map.copyOf(factories);
    }

    public static ExporterRegistry builtIn()
    {
        return new ExporterRegistry(Map.of(FileExporter.TYPE, FileExporter::new));
    }

    /** Fails naming the setting when a configured exporter's type is unknown. */
    public void validate(final Map<String, ExporterConfig> exporters)
    {
        for (final ExporterConfig config : exporters.values())
        {
            if (!factories.containsKey(config.type()))
            {
                throw new InvalidClusterConfigException("sluice.exporters." + config.id() + ".type",
                    "unknown exporter type '" + config.type() + "' (known: " + factories.keySet() + ")");
            }
        }
    }

    public Exporter create(final ExporterConfig config)
    {
        final Supplier<Exporter> factory = factories.get(config.type());
        if (factory == null)
        {
            throw new IllegalArgumentException("exporter " + config.id() + ": unknown type '" + config.type() + "'");
        }
        return factory.get();
    }
}
