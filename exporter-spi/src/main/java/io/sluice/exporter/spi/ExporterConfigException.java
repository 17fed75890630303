package io.sluice.exporter.spi;

/**
 * Thrown by {@link Exporter#configure} for a setting that cannot work. The broker configures every exporter once
 * when it starts, so this stops it there with one line naming {@code sluice.exporters.<id>.<property>}.
 */
public final class ExporterConfigException extends IllegalArgumentException
{
    private final String property;

    /**
     * @param property the setting's name under {@code sluice.exporters.<id>.}, as in
     *                 {@link ExporterContext#properties()}: {@code bootstrap-servers}, {@code producer.acks},
     *                 {@code args.url}.
     * @param message  what is wrong with it, with the value where that helps.
     */
    public ExporterConfigException(final String property, final String message)
    {
        super(property + ": " + message);
        this.property = property;
    }

    /** The setting's name under {@code sluice.exporters.<id>.}. */
    public String property()
    {
        return property;
    }

    /** What is wrong, without the property name. */
    public String problem()
    {
        return getMessage().substring(property.length() + 2);
    }
}
