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
}
