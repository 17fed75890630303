package io.sluice.broker.exporter;

/**
 * A sink for a partition's committed records, run on the partition's leader only, one instance per
 * (exporter, partition) and leadership term.
 * <p>
 * Lifecycle: {@link #configure} once, {@link #open} once, {@link #export} for each record in position
 * order, {@link #close} once. All calls come from one thread at a time. An exception from {@code export}
 * makes the director retry the same record later, with backoff; a record is never skipped. Delivery is at
 * least once: after a leader change records from the last acknowledged position on are exported again.
 */
public interface Exporter
{
    /** Reads the configuration; must not touch the sink yet. */
    void configure(ExporterContext context) throws Exception;

    /** Starts exporting; {@code controller} acknowledges positions durably exported. */
    void open(ExporterController controller) throws Exception;

    /** Exports one record; the record is valid only during the call. */
    void export(CommittedRecord record) throws Exception;

    /** Releases the sink. */
    void close() throws Exception;
}
