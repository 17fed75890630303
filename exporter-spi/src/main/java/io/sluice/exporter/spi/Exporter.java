package io.sluice.exporter.spi;

/**
 * A sink for a partition's committed records (the guide: {@code docs/exporters.md}), run on the partition's leader only, one instance per
 * (exporter, partition) and leadership term; backfill tasks run further instances of the same kind, with
 * the same configuration, over older ranges.
 * <p>
 * Lifecycle: {@link #configure} once, {@link #open} once, then {@link #export} for each record in position
 * order interleaved with {@link #flush}, and {@link #close} once. All calls come from one thread at a time.
 * <p>
 * <b>The sink is written only from inside {@code export} and {@code flush}.</b> The director makes those calls
 * only while exporting is not paused, and a pause takes effect between two calls; so an exporter that buffers
 * (a bulk, a batch) must send its buffer from one of those calls, never from a thread of its own, or records
 * could reach the sink after a pause was answered. Buffered records that were not sent when the exporter is
 * closed are dropped: they were not acknowledged, so they are exported again.
 * <p>
 * Failures: an exception from {@code export} makes the director offer the same record again later; one from
 * {@code flush} makes it call {@code flush} again before any further record. Both after a capped exponential
 * backoff with jitter, while the exporter is shown as {@code RETRYING} with the exception's message. A record
 * is never skipped. Delivery is at least once: after a leader change, a restart or a failed attempt, records
 * from the last acknowledged position on are exported again, so sinks should write idempotently (for example
 * keyed by partition id and position).
 */
public interface Exporter
{
    /**
     * Reads the configuration from {@code context}; must not touch the sink, nor start threads or open resources: at
     * start the broker also configures a throwaway instance (partition id 0, never opened or closed) to check the
     * settings. Throw {@link ExporterConfigException} naming the setting that cannot work: at start that stops the
     * broker with one line naming {@code sluice.exporters.<id>.<property>}; later it keeps the exporter retrying.
     */
    void configure(ExporterContext context) throws Exception;

    /** Starts exporting; {@code controller} acknowledges positions durably exported. */
    void open(ExporterController controller) throws Exception;

    /**
     * Exports one record, or buffers it; the record (and its buffer) is valid only during the call, so a
     * buffering exporter copies what it keeps. An exporter whose buffer is full should send it here first, and
     * throw if that fails, so that memory stays bounded while the sink is down.
     */
    void export(CommittedRecord record) throws Exception;

    /**
     * Called when the director has handed over every record available for now, and again about every 100 ms
     * while exporting is not paused: send what is due (for example a bulk that is full or whose oldest record has
     * waited its maximum delay) and acknowledge what the sink confirmed. The default does nothing, for exporters
     * that write each record in {@link #export}.
     */
    default void flush() throws Exception
    {
    }

    /** Releases the sink; records still buffered are dropped (they were never acknowledged). */
    void close() throws Exception;

    /**
     * The optional snapshot capability (issue 26): the snapshots of this exporter's sink that backups take inside
     * their cut and a restore puts back, for the settings {@link #configure} was given; null (the default) when this
     * exporter takes none, and its positions alone are backed up. Called on a configured instance that was never
     * opened; the caller closes what it returns.
     */
    default SinkSnapshots snapshots() throws Exception
    {
        return null;
    }
}
