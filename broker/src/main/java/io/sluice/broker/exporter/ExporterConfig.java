package io.sluice.broker.exporter;

import io.sluice.protocol.cluster.InvalidClusterConfigException;

import java.util.Map;
import java.util.Objects;

/**
 * One configured exporter ({@code sluice.exporters.<id>.*}): its id, its kind ({@code type}) and the kind's
 * properties (for {@code file}: {@code path}). A third-party exporter has {@link #CLASS_NAME} and {@link #JAR}
 * among its properties, and its class name as its type.
 */
public record ExporterConfig(String id, String type, Map<String, String> properties)
{
    /** A third-party exporter's class, implementing the exporter SPI. */
    public static final String CLASS_NAME = "class-name";
    /** The jar holding a third-party exporter, loaded in a class loader of its own. */
    public static final String JAR = "jar";

    public ExporterConfig
    {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(type, "type");
        properties = properties == null ? Map.of() : Map.copyOf(properties);
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
        String value = properties.get(START_FROM);
        if (value == null)
        {
            value = properties.get("startfrom"); // bound from SLUICE_EXPORTERS_<ID>_STARTFROM
        }
        if (value == null)
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

    /** The properties the exporter itself is configured with: without the broker's own ({@link #START_FROM}). */
    public Map<String, String> exporterProperties()
    {
        if (!properties.containsKey(START_FROM) && !properties.containsKey("startfrom"))
        {
            return properties;
        }
        final Map<String, String> own = new java.util.HashMap<>(properties);
        own.remove(START_FROM);
        own.remove("startfrom");
        return Map.copyOf(own);
    }

    /** {@code sluice.exporters.<id>.<property>}, for messages that name a setting. */
    public String setting(final String property)
    {
        return "sluice.exporters." + id + "." + property;
    }
}
