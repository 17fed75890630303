package io.sluice.broker.partition;

/**
 * One exporter of a partition as its leader's director sees it: the position acknowledged so far (not yet
 * necessarily replicated), whether its sink is failing and is being retried, with the last error, and how many
 * attempts failed in this leadership term; what the exporter reported of its writes to the sink (count, summed
 * latency) and of records it sent to a dead-letter store, also in this term.
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
    long sinkWriteNanos)
{
    public ExporterStatus(
        final String exporterId, final String type, final long acknowledgedPosition, final boolean retrying,
        final String lastError, final long failures)
    {
        this(exporterId, type, acknowledgedPosition, retrying, lastError, failures, 0, 0, 0);
    }
}
