package io.sluice.exporter.spi;

/**
 * Handed to an exporter on {@link Exporter#open}: how it reports what its sink durably took. Thread-safe, though the
 * SPI's rules mean it is called from within {@code export} or {@code flush}.
 */
public interface ExporterController
{
    /**
     * Marks every position up to and including {@code position} as durably exported: call it only once the sink
     * confirmed every record up to there. Acknowledged positions are replicated in batches, never moved backwards,
     * and held back while exporting is soft paused; the log is compacted only below the lowest one.
     */
    void acknowledge(long position);

    /**
     * Reports one write to the sink (a bulk request, a batch of sends) of {@code records} records that took
     * {@code latencyNanos}, successful or not; shown in the exporters' metrics. Optional.
     */
    default void sinkWriteCompleted(final int records, final long latencyNanos)
    {
    }

    /** Reports {@code records} records the sink rejected for good that went to a dead-letter store. Optional. */
    default void deadLettered(final int records)
    {
    }
}
