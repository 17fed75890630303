package io.sluice.exporter.spi;

/** Handed to an exporter on open. Thread-safe. */
public interface ExporterController
{
    /**
     * Marks every position up to and including {@code position} as durably exported. Acknowledged
     * positions are replicated in batches, never moved backwards, and held back while exporting is soft
     * paused.
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
