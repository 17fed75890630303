package io.sluice.broker.backfill;

/**
 * One instance of an exporter used by one backfill task only, so a task never shares position tracking or
 * buffers with the partition's regular exporter of the same id. Used by one thread at a time.
 */
public interface BackfillExporter extends BackfillRecordConsumer, AutoCloseable
{
    /**
     * Lets the exporter send what is due to its sink (called under the export gate) and returns the highest position up to which every
     * record is durably exported (acknowledged by the exporter); a checkpoint never goes past it.
     */
    long flush() throws Exception;

    /** The highest position acknowledged so far, without touching the sink. */
    long acknowledged();

    @Override
    void close() throws Exception;
}
