package io.sluice.gateway.broker;

/** One record as a client gave it: key may be null, payload is the JSON text in UTF-8. */
public record RecordToAppend(String key, long timestamp, byte[] payload)
{
}
