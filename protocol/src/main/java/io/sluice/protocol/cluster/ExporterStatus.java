package io.sluice.protocol.cluster;

/**
 * One exporter of one partition as the partition's leader sees it, as a broker reports it in an
 * {@code ExportersStatusResponse} and the gateway reads it back: its acknowledged position (the replicated one, which
 * compaction and a new leader go by; a soft pause holds it back) and the last position sent to its sink
 * ({@code sentPosition}, never behind the acknowledged one; ahead of it during a soft pause or while a bulk is in
 * flight), whether its sink is failing and is being retried, with the last error ({@code null}
 * when none), and how many attempts failed in this leadership term; what the exporter reported of its writes to
 * the sink (count, summed latency) and of records it sent to a dead-letter store, also in this term; and the range
 * of positions it can never export because they were compacted before it got there ({@code unavailableFrom} to
 * {@code unavailableTo}, both 0 when none).
 */
public record ExporterStatus(
    String exporterId,
    String type,
    long acknowledgedPosition,
    boolean retrying,
    String lastError,
    long failures,
    long deadLetters,
    long sinkWrites,
    long sinkWriteNanos,
    long unavailableFrom,
    long unavailableTo,
    long sentPosition)
{
    /** An exporter whose sink has no more than it acknowledged (as a version 4 broker reports it). */
    public ExporterStatus(
        final String exporterId, final String type, final long acknowledgedPosition, final boolean retrying,
        final String lastError, final long failures, final long deadLetters, final long sinkWrites,
        final long sinkWriteNanos, final long unavailableFrom, final long unavailableTo)
    {
        this(exporterId, type, acknowledgedPosition, retrying, lastError, failures, deadLetters, sinkWrites,
            sinkWriteNanos, unavailableFrom, unavailableTo, acknowledgedPosition);
    }

    /** An exporter without a range it can never export. */
    public ExporterStatus(
        final String exporterId, final String type, final long acknowledgedPosition, final boolean retrying,
        final String lastError, final long failures, final long deadLetters, final long sinkWrites,
        final long sinkWriteNanos)
    {
        this(exporterId, type, acknowledgedPosition, retrying, lastError, failures, deadLetters, sinkWrites,
            sinkWriteNanos, 0, 0, acknowledgedPosition);
    }

    /** Whether some positions were compacted before this exporter got there. */
    public boolean hasUnavailable()
    {
        return unavailableFrom > 0 && unavailableTo >= unavailableFrom;
    }
}
