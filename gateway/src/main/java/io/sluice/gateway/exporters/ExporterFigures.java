package io.sluice.gateway.exporters;

/**
 * One exporter of one partition as the partition's leader reported it: acknowledged position, whether its sink
 * is failing, the last error, and the leader's counters of this leadership term (failed attempts, dead letters,
 * writes to the sink and their summed latency).
 */
public record ExporterFigures(
    String exporterId,
    String type,
    long position,
    boolean retrying,
    String lastError,
    long failures,
    long deadLetters,
    long sinkWrites,
    long sinkWriteNanos)
{
}
