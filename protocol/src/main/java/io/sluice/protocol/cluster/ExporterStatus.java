package io.sluice.protocol.cluster;

/**
 * One exporter of one partition as the partition's leader sees it, as a broker reports it in an
 * {@code ExportersStatusResponse} and the gateway reads it back: the position acknowledged so far (not yet
 * necessarily replicated), whether its sink is failing and is being retried, with the last error ({@code null}
 * when none), and how many attempts failed in this leadership term; what the exporter reported of its writes to
 * the sink (count, summed latency) and of records it sent to a dead-letter store, also in this term.
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
}
