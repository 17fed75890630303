package io.sluice.qa.cluster;

/** One line of a file exporter's {@code partition-<id>.jsonl} (CONTRACT §4); {@code payloadJson} as written. */
public record ExportedRecord(int partitionId, long position, String key, long timestamp, String payloadJson)
{
}
