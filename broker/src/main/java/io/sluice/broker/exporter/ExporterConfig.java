package io.sluice.broker.exporter;

import io.sluice.exporter.spi.ExporterSettings;
import io.sluice.protocol.cluster.InvalidClusterConfigException;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One configured exporter ({@code sluice.exporters.<id>.*}): its id, its kind ({@code type}) and its properties
 * (for {@code file}: {@code path}). A third-party exporter has {@link #CLASS_NAME} and {@link #JAR} among its
 * properties, and its class name as its type.
 * <p>
 * The settings the broker reads itself ({@link #BROKER_OWNED}: {@code type}, {@code class-name}, {@code jar},
 * {@code start-from}, {@code retry.*}) are kept under their contract spelling whatever spelling they were given in
 * (environment variables give {@code classname}, {@code startfrom}, {@code retry.maxbackoff}), and taken off before
 * the exporter sees its settings ({@link #exporterProperties()}).
 */
public record ExporterConfig(String id, String type, Map<String, String> properties)
{
    /** A third-party exporter's class, implementing the exporter SPI. */
    public static final String CLASS_NAME = "class-name";
    /** The jar holding a third-party exporter, loaded in a class loader of its own. */
    public static final String JAR = "jar";

    /** The cap of the director's retry backoff, read by the broker for every exporter. */
    public static final String RETRY_MAX_BACKOFF = "retry.max-backoff";
    /** The broker's group of settings about retrying a failing sink. */
    public static final String RETRY_GROUP = "retry";
    /** Settings the broker reads itself and never passes to an exporter (with everything under {@code retry.}). */
    public static final List<String> BROKER_OWNED = List.of("type", "class-name", "jar", "start-from", RETRY_MAX_BACKOFF);

    public ExporterConfig
    {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(type, "type");
        properties = properties == null ? Map.of() : Map.copyOf(withBrokerSpellings(id, properties));
    }

    /**
     * {@code properties} with each broker-owned setting under its contract spelling ({@code classname} becomes
     * {@code class-name}), so the broker finds it however it was given.
     *
     * @throws InvalidClusterConfigException when two spellings of one such setting have different values.
     */
    public static Map<String, String> withBrokerSpellings(final String id, final Map<String, String> properties)
    {
        if (properties == null)
        {
            return Map.of();
        }
        final Map<String, String> result = new HashMap<>(properties);
        for (final String owned : BROKER_OWNED)
        {
            for (final Map.Entry<String, String> entry : properties.entrySet())
            {
                if (!entry.getKey().equals(owned) && ExporterSettings.sameName(entry.getKey(), owned))
                {
                    final String earlier = result.get(owned);
                    if (earlier != null && !earlier.trim().equals(String.valueOf(entry.getValue()).trim()))
                    {
                        throw new InvalidClusterConfigException("sluice.exporters." + id + "." + entry.getKey(),
                            "'" + entry.getValue() + "' given while sluice.exporters." + id + "." + owned + " is '" +
                                earlier + "' (spellings of one setting)");
                    }
                    result.remove(entry.getKey());
                    result.put(owned, entry.getValue());
                }
            }
        }
        return result;
    }

    /**
     * Where an exporter new to a partition (no acknowledged position there: added, renamed or re-added after its
     * position went) starts ({@code sluice.exporters.<id>.start-from}); read by the broker, never passed to the
     * exporter.
     */
    public static final String START_FROM = "start-from";

    /** Where an exporter new to a partition starts. */
    public enum StartFrom
    {
        /** The oldest record the partition still holds: everything not yet compacted away. */
        EARLIEST,
        /** After the partition's last record when the exporter first runs there: only records written from then on. */
        LATEST
    }

    /** The default configuration: exporter {@code file} of type {@code file}. */
    public static Map<String, ExporterConfig> defaults()
    {
        return Map.of(FileExporter.TYPE, new ExporterConfig(FileExporter.TYPE, FileExporter.TYPE, Map.of()));
    }

    /** A third-party exporter loaded from {@code jar}: its type is its class name. */
    public static ExporterConfig thirdParty(
        final String id, final String className, final String jar, final Map<String, String> args)
    {
        final Map<String, String> properties = new java.util.HashMap<>();
        args.forEach((name, value) -> properties.put("args." + name, value));
        properties.put(CLASS_NAME, className);
        properties.put(JAR, jar);
        return new ExporterConfig(id, className, properties);
    }

    /** Whether this exporter is loaded from a jar ({@link #CLASS_NAME} is set) rather than built in. */
    public boolean isThirdParty()
    {
        return properties.containsKey(CLASS_NAME);
    }

    /**
     * This exporter's {@link StartFrom}: {@code earliest} (the default) or {@code latest}.
     *
     * @throws InvalidClusterConfigException naming the setting when it is anything else.
     */
    public StartFrom startFrom()
    {
        final String value = properties.get(START_FROM);
        if (value == null || value.isBlank())
        {
            return StartFrom.EARLIEST;
        }
        return switch (value.trim().toLowerCase(java.util.Locale.ROOT))
        {
            case "earliest" -> StartFrom.EARLIEST;
            case "latest" -> StartFrom.LATEST;
            default -> throw new InvalidClusterConfigException(setting(START_FROM),
                "'" + value + "' is neither earliest (the oldest record the partition still holds) nor latest");
        };
    }

    /**
     * The properties the exporter itself is configured with: without the broker's own ({@link #BROKER_OWNED} and
     * everything under {@code retry.}), so an exporter that refuses unknown settings never sees them.
     */
    public Map<String, String> exporterProperties()
    {
        return Map.copyOf(new ExporterSettings(id, properties).without(BROKER_OWNED, List.of(RETRY_GROUP)));
    }

    /** {@code sluice.exporters.<id>.<property>}, for messages that name a setting. */
    public String setting(final String property)
    {
        return "sluice.exporters." + id + "." + property;
    }
}
