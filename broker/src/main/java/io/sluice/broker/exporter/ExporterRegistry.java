package io.sluice.broker.exporter;

import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterConfigException;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterFactory;
import io.sluice.exporter.spi.ExporterSettings;
import io.sluice.protocol.cluster.InvalidClusterConfigException;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Builds exporter instances: kinds by {@code type} from the {@link ExporterFactory} implementations that
 * {@link ServiceLoader} finds on the broker's class path (the built-in {@code file}, {@code opensearch} and
 * {@code kafka} among them: the broker knows none by name), third-party exporters by {@code class-name} from their
 * {@code jar} (see {@link ThirdPartyExporters}; each jar is loaded once per configuration). Thread-safe.
 */
public final class ExporterRegistry
{
    /** The partition id of the context an exporter is configured with when the broker checks it at start. */
    public static final int CHECK_PARTITION_ID = 0;
    /** Every exporter's cap of the director's retry backoff ({@code sluice.exporters.<id>.retry.max-backoff}). */
    public static final String RETRY_MAX_BACKOFF = ExporterConfig.RETRY_MAX_BACKOFF;
    /** The cap for a third-party exporter, which has no factory to say otherwise. */
    private static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(5);

    private final Map<String, ExporterFactory> factories;
    private final Map<ExporterConfig, Supplier<Exporter>> thirdParty = new ConcurrentHashMap<>();

    /**
     * @throws IllegalStateException when two factories name the same kind: which one ran would depend on the
     *                               class path's order.
     */
    public ExporterRegistry(final Collection<? extends ExporterFactory> factories)
    {
        final Map<String, ExporterFactory> byType = new TreeMap<>();
        for (final ExporterFactory factory : factories)
        {
            final ExporterFactory earlier = byType.put(factory.type(), factory);
            if (earlier != null)
            {
                throw new IllegalStateException("exporter type '" + factory.type() + "' is named by both " +
                    earlier.getClass().getName() + " and " + factory.getClass().getName());
            }
        }
        this.factories = java.util.Collections.unmodifiableMap(byType); // sorted, for messages that list the kinds
    }

    /** A registry of the kinds found by {@link ServiceLoader} on the broker's class path. */
    public static ExporterRegistry builtIn()
    {
        return new ExporterRegistry(Discovered.FACTORIES);
    }

    /** The kinds this registry knows, by type. */
    public Map<String, ExporterFactory> factories()
    {
        return factories;
    }

    /**
     * Fails naming the setting when a configured exporter's type is unknown, a third-party exporter's jar or class
     * cannot be loaded, or a setting the broker reads itself cannot work.
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
                throw new InvalidClusterConfigException(config.setting("type"),
                    "unknown exporter type '" + config.type() + "' (known: " + String.join(", ", factories.keySet()) +
                        "; a third-party exporter sets class-name and jar instead)");
            }
            checkRetrySettings(config);
            maxBackoffMs(config);
            config.startFrom();
        }
    }

    /**
     * Checks every configured exporter before the broker starts: a known type, and settings its kind accepts
     * ({@link ExporterFactory#validate}; a third-party exporter's {@link Exporter#configure} on a throwaway instance,
     * which must not touch the sink). Fails with the one setting to fix.
     *
     * @throws InvalidClusterConfigException naming {@code sluice.exporters.<id>.<property>}.
     */
    public void validate(final int brokerId, final Path dataDir, final Map<String, ExporterConfig> exporters)
    {
        validate(exporters);
        for (final ExporterConfig config : exporters.values())
        {
            final ExporterContext context =
                new ExporterContext(config.id(), CHECK_PARTITION_ID, brokerId, dataDir, config.exporterProperties());
            try
            {
                if (config.isThirdParty())
                {
                    create(config).configure(context);
                }
                else
                {
                    factories.get(config.type()).validate(context);
                }
            }
            catch (final ExporterConfigException e)
            {
                throw new InvalidClusterConfigException(e.setting(config.id()), e.problem());
            }
            catch (final InvalidClusterConfigException e)
            {
                throw e;
            }
            catch (final Exception | LinkageError e)
            {
                throw new InvalidClusterConfigException(config.setting(config.isThirdParty() ? ExporterConfig.CLASS_NAME : "type"),
                    "exporter '" + config.id() + "' of type '" + config.type() + "' refused its configuration: " +
                        (e.getMessage() == null ? e.toString() : e.getMessage()));
            }
        }
    }

    /**
     * The cap of the retry backoff of an exporter: its {@code retry.max-backoff} ({@code 30s}, {@code 500ms}, a bare
     * number being milliseconds), else its kind's default ({@link ExporterFactory#defaultRetryMaxBackoff}).
     *
     * @throws InvalidClusterConfigException naming the setting when it is not a positive duration.
     */
    public static long maxBackoffMs(final ExporterConfig config)
    {
        ExporterFactory factory = null;
        for (final ExporterFactory candidate : Discovered.FACTORIES)
        {
            factory = candidate.type().equals(config.type()) ? candidate : factory;
        }
        final Duration fallback = factory == null ? DEFAULT_MAX_BACKOFF : factory.defaultRetryMaxBackoff();
        try
        {
            final Duration cap = new ExporterSettings(config.id(), config.properties()).duration(RETRY_MAX_BACKOFF, fallback);
            return Math.max(1, cap.toMillis());
        }
        catch (final ExporterConfigException e)
        {
            throw new InvalidClusterConfigException(e.setting(config.id()), e.problem());
        }
    }

    public Exporter create(final ExporterConfig config)
    {
        if (config.isThirdParty())
        {
            return thirdPartyFactory(config).get();
        }
        final ExporterFactory factory = factories.get(config.type());
        if (factory == null)
        {
            throw new IllegalArgumentException("exporter " + config.id() + ": unknown type '" + config.type() + "'");
        }
        return factory.create();
    }

    /** Everything under {@code retry.} is the broker's: a typo there would otherwise vanish with the group. */
    private static void checkRetrySettings(final ExporterConfig config)
    {
        try
        {
            new ExporterSettings(config.id(), config.properties()).group(ExporterConfig.RETRY_GROUP)
                .requireOnly(List.of(RETRY_MAX_BACKOFF.substring(ExporterConfig.RETRY_GROUP.length() + 1)), List.of(),
                    "the broker's retry group");
        }
        catch (final ExporterConfigException e)
        {
            throw new InvalidClusterConfigException(e.setting(config.id()), e.problem());
        }
    }

    private Supplier<Exporter> thirdPartyFactory(final ExporterConfig config)
    {
        return thirdParty.computeIfAbsent(config, ThirdPartyExporters::load);
    }

    /** Loaded once: the class path does not change while the broker runs. */
    private static final class Discovered
    {
        static final List<ExporterFactory> FACTORIES = load();

        private static List<ExporterFactory> load()
        {
            final List<ExporterFactory> found = new ArrayList<>();
            ServiceLoader.load(ExporterFactory.class, ExporterRegistry.class.getClassLoader()).forEach(found::add);
            return List.copyOf(found);
        }
    }
}
