package io.sluice.broker.exporter;

import io.sluice.exporter.kafka.KafkaExporter;
import io.sluice.exporter.opensearch.OpenSearchExporter;
import io.sluice.exporter.opensearch.OpenSearchExporterConfig;
import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterConfigException;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.protocol.cluster.InvalidClusterConfigException;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Builds exporter instances: built-in kinds by {@code type} ({@code file}, {@code opensearch} and {@code kafka}),
 * third-party exporters by {@code class-name} from their {@code jar} (see {@link ThirdPartyExporters}; each jar is
 * loaded once per configuration). Thread-safe.
 */
public final class ExporterRegistry
{
    /** The partition id of the context an exporter is configured with when the broker checks it at start. */
    public static final int CHECK_PARTITION_ID = 0;
    /** Every exporter's cap of the director's retry backoff ({@code sluice.exporters.<id>.retry.max-backoff}). */
    public static final String RETRY_MAX_BACKOFF = "retry.max-backoff";
    private static final long DEFAULT_MAX_BACKOFF_MS = 5_000;
    /** Kinds whose contract sets another default cap (a remote sink is not hammered every 5 s). */
    private static final Map<String, Long> DEFAULT_MAX_BACKOFF_MS_BY_TYPE = Map.of(OpenSearchExporter.TYPE, 30_000L);
    /**
     * Checks of a kind's properties at startup, so a bad value stops the broker naming the setting instead of
     * failing each partition's exporter later; each throws IllegalArgumentException("property: why").
     */
    private static final Map<String, Consumer<Map<String, String>>> PROPERTY_CHECKS =
        Map.of(OpenSearchExporter.TYPE, OpenSearchExporterConfig::parse);

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
            OpenSearchExporter.TYPE, OpenSearchExporter::new,
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
            maxBackoffMs(config);
            config.startFrom();
            final Consumer<Map<String, String>> check = PROPERTY_CHECKS.get(config.type());
            if (check != null)
            {
                try
                {
                    check.accept(config.exporterProperties());
                }
                catch (final IllegalArgumentException e)
                {
                    final String message = String.valueOf(e.getMessage());
                    final int colon = message.indexOf(": ");
                    throw colon > 0 ?
                        new InvalidClusterConfigException("sluice.exporters." + config.id() + "." +
                            message.substring(0, colon), message.substring(colon + 2)) :
                        new InvalidClusterConfigException("sluice.exporters." + config.id(), message);
                }
            }
        }
    }

    /**
     * The cap of the retry backoff of an exporter: its {@code retry.max-backoff} ({@code 30s}, {@code 500ms}, a bare
     * number being milliseconds), else its kind's default.
     */
    public static long maxBackoffMs(final ExporterConfig config)
    {
        String value = config.properties().get(RETRY_MAX_BACKOFF);
        if (value == null)
        {
            value = config.properties().get("retry.maxbackoff"); // bound from SLUICE_EXPORTERS_<ID>_RETRY_MAXBACKOFF
        }
        if (value == null)
        {
            return DEFAULT_MAX_BACKOFF_MS_BY_TYPE.getOrDefault(config.type(), DEFAULT_MAX_BACKOFF_MS);
        }
        try
        {
            final Duration parsed = OpenSearchExporterConfig.duration(RETRY_MAX_BACKOFF, value);
            return Math.max(1, parsed.toMillis());
        }
        catch (final IllegalArgumentException e)
        {
            throw new InvalidClusterConfigException("sluice.exporters." + config.id() + "." + RETRY_MAX_BACKOFF,
                "'" + value + "' is not a positive duration (e.g. 30s, 500ms, 2m)");
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
                    new ExporterContext(config.id(), CHECK_PARTITION_ID, brokerId, dataDir, config.exporterProperties()));
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
