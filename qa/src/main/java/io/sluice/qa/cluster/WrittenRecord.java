package io.sluice.qa.cluster;

/** A record the gateway acknowledged with 200: where it was committed. */
public record WrittenRecord(String key, String payloadJson, int partitionId, long position)
{
}
