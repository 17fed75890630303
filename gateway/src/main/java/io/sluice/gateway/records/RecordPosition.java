package io.sluice.gateway.records;

/** Where a committed record sits: the answer of {@code POST /v1/records}. */
public record RecordPosition(int partitionId, long position)
{
}
