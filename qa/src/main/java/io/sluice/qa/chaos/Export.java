package io.sluice.qa.chaos;

/**
 * One line of a file exporter's {@code partition-<id>.jsonl}: the record's place, the write it carries (its payload's
 * {@code w}, null for records the workload did not write) and when the harness saw it arrive. The line was written
 * after {@code absentAt} (the start of the last read of the file that did not hold it) and at or before
 * {@code presentAt} (the end of the first read that did): times on the history's clock.
 */
public record Export(int partitionId, long position, String writeId, int line, long absentAt, long presentAt)
{
}
