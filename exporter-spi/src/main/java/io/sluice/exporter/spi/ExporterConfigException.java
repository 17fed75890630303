package io.sluice.exporter.spi;

/**
 * The one way an exporter says a setting cannot work, thrown from {@link Exporter#configure} or
 * {@link ExporterFactory#validate}. The broker configures every exporter once when it starts, so this stops it there
 * with one line naming the full setting {@code sluice.exporters.<id>.<property>}; later (a new leader configuring its
 * instance) it keeps the exporter retrying with this message.
 * <p>
 * {@link ExporterSettings} throws it with the exporter's id, so {@link #getMessage()} names the full setting itself.
 */
public final class ExporterConfigException extends IllegalArgumentException
{
    /** Every exporter's settings live under {@code sluice.exporters.<id>.}. */
    public static final String SETTINGS_PREFIX = "sluice.exporters.";

    private final String exporterId;
    private final String property;
    private final String problem;

    /**
     * @param property the setting's name under {@code sluice.exporters.<id>.}, as in
     *                 {@link ExporterContext#properties()}: {@code bootstrap-servers}, {@code producer.acks},
     *                 {@code args.url}.
     * @param message  what is wrong with it, with the value where that helps.
     */
    public ExporterConfigException(final String property, final String message)
    {
        this(null, property, message);
    }

    /**
     * @param exporterId the exporter's id, so the message names {@code sluice.exporters.<id>.<property>}; null when
     *                   not known (the message then names only {@code property}).
     * @param property   the setting's name under {@code sluice.exporters.<id>.}.
     * @param message    what is wrong with it, with the value where that helps.
     */
    public ExporterConfigException(final String exporterId, final String property, final String message)
    {
        super((exporterId == null ? property : setting(exporterId, property)) + ": " + message);
        this.exporterId = exporterId;
        this.property = property;
        this.problem = message;
    }

    /** {@code sluice.exporters.<exporterId>.<property>}. */
    public static String setting(final String exporterId, final String property)
    {
        return SETTINGS_PREFIX + exporterId + "." + property;
    }

    /** The setting's name under {@code sluice.exporters.<id>.}. */
    public String property()
    {
        return property;
    }

    /** The full setting, {@code sluice.exporters.<id>.<property>}, for the exporter {@code exporterId} if not known here. */
    public String setting(final String fallbackExporterId)
    {
        return setting(exporterId != null ? exporterId : fallbackExporterId, property);
    }

    /** What is wrong, without the property name. */
    public String problem()
    {
        return problem;
    }
}
