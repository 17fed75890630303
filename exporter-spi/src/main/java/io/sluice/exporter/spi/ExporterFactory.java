package io.sluice.exporter.spi;

import java.time.Duration;

/**
 * A kind of exporter ({@code sluice.exporters.<id>.type=<type>}), found by {@link java.util.ServiceLoader}: list the
 * implementation in {@code META-INF/services/io.sluice.exporter.spi.ExporterFactory} of its jar. The built-in kinds
 * ({@code file}, {@code opensearch}, {@code kafka}) are found this way too; the broker knows none of them by name.
 * <p>
 * Implementations need a public no-argument constructor and are thread-safe (one instance serves every partition).
 */
public interface ExporterFactory
{
    /** The kind's name, the value of {@code sluice.exporters.<id>.type}: lower case, e.g. {@code kafka}. */
    String type();

    /** A new, unconfigured exporter of this kind: the broker calls {@link Exporter#configure} next. */
    Exporter create();

    /**
     * Checks an exporter's settings when the broker starts, so one that cannot work stops it with one line
     * ({@link ExporterConfigException}) rather than failing on every partition later. Must not touch the sink. The
     * default configures a throwaway instance ({@code context.partitionId()} is 0), which is enough for an exporter
     * whose {@code configure} reads every setting.
     */
    default void validate(final ExporterContext context) throws Exception
    {
        create().configure(context);
    }

    /**
     * The cap of the director's retry backoff when {@code sluice.exporters.<id>.retry.max-backoff} is not set: a
     * remote sink that is down is not worth asking every few seconds.
     */
    default Duration defaultRetryMaxBackoff()
    {
        return Duration.ofSeconds(5);
    }
}
