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
}
