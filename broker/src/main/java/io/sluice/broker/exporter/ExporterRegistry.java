package io.sluice.broker.exporter;

import io.sluice.exporter.kafka.KafkaExporter;
import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterConfigException;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.protocol.cluster.InvalidClusterConfigException;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Builds exporter instances: built-in kinds by {@code type} ({@code file} and {@code kafka}), third-party exporters
 * by {@code class-name} from their {@code jar} (see {@link ThirdPartyExporters}; each jar is loaded once per
 * configuration). Thread-safe.
 */
public final class ExporterRegistry
{
    /** The partition id of the context an exporter is configured with when the broker checks it at start. */
    public static final int CHECK_PARTITION_ID = 0;

    private final Map<String, Supplier<Exporter>> factories;
    private final Map<ExporterConfig, Supplier<Exporter>> thirdParty = new ConcurrentHashMap<>();

    public ExporterRegistry(final Map<String, Supplier<Exporter>> factories)
    {
        this.factories = Map.copyOf(factories);
    }

    public static ExporterRegistry builtIn()
    {
        return new ExporterRegistry(Map.of(
            FileExporter.TYPE, FileExporter::new,
            KafkaExporter.TYPE, KafkaExporter::new));
    }

    /**
     * Fails naming the setting when a configured exporter's type is unknown, or a third-party exporter's jar or class
     * cannot be loaded.
     */
    public void validate(final Map<String, ExporterConfig> exporters)
    {
        for (final ExporterConfig config : exporters.values())
        {
            if (config.isThirdParty())
            {
                thirdPartyFactory(config);
            }
            else if (!factories.containsKey(config.type()))
            {
                throw new InvalidClusterConfigException("sluice.exporters." + config.id() + ".type",
                    "unknown exporter type '" + config.type() + "' (known: " + factories.keySet() + ")");
            }
        }
    }

    /**
     * Checks every configured exporter before the broker starts: a known type, and a configuration its exporter
     * accepts ({@link Exporter#configure} on a throwaway instance, which must not touch the sink). Fails with the
     * one setting to fix.
     *
     * @throws InvalidClusterConfigException naming {@code sluice.exporters.<id>.<property>}.
     */
    public void validate(final int brokerId, final Path dataDir, final Map<String, ExporterConfig> exporters)
    {
        validate(exporters);
        for (final ExporterConfig config : exporters.values())
        {
            final String prefix = "sluice.exporters." + config.id() + ".";
            try
            {
                create(config).configure(
                    new ExporterContext(config.id(), CHECK_PARTITION_ID, brokerId, dataDir, config.properties()));
            }
            catch (final ExporterConfigException e)
            {
                throw new InvalidClusterConfigException(prefix + e.property(), e.problem());
            }
            catch (final InvalidClusterConfigException e)
            {
                throw e;
            }
            catch (final Exception | LinkageError e)
            {
                throw new InvalidClusterConfigException(prefix + (config.isThirdParty() ? ExporterConfig.CLASS_NAME : "type"),
                    "exporter '" + config.id() + "' of type '" + config.type() + "' refused its configuration: " +
                        (e.getMessage() == null ? e.toString() : e.getMessage()));
            }
        }
    }

    public Exporter create(final ExporterConfig config)
    {
        if (config.isThirdParty())
        {
            return thirdPartyFactory(config).get();
        }
        final Supplier<Exporter> factory = factories.get(config.type());
        if (factory == null)
        {
            throw new IllegalArgumentException("exporter " + config.id() + ": unknown type '" + config.type() + "'");
        }
        return factory.get();
    }

    private Supplier<Exporter> thirdPartyFactory(final ExporterConfig config)
    {
        return thirdParty.computeIfAbsent(config, ThirdPartyExporters::load);
    }
}
