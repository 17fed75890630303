package io.sluice.broker.exporter;

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

    /** {@code sluice.exporters.<id>.<property>}, for messages that name a setting. */
    public String setting(final String property)
    {
        return "sluice.exporters." + id + "." + property;
    }
}
