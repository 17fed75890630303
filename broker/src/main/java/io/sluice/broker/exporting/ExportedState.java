package io.sluice.broker.exporting;

import io.sluice.broker.log.RecordLog;

/**
 * What a partition's exporters read of its replicated state: their acknowledged positions, the record log and the
 * ranges they can never export. The partition's state implements it; reads are safe from any thread.
 */
public interface ExportedState
{
    /** Replicated acknowledged position of an exporter, 0 when it acknowledged nothing yet. */
    long exporterPosition(String exporterId);

    /** Whether the exporter has a replicated position here (it ran on this partition before). */
    boolean hasExporterPosition(String exporterId);

    /** The last position the log holds. */
    long lastPosition();

    RecordLog recordLog();

    /** The latest range the exporter moved past because it was compacted away, or null. */
    UnavailableRange unavailableRange(String exporterId);
}
