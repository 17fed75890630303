package io.sluice.exporter.opensearch;

import io.sluice.exporter.spi.CommittedRecord;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;

/** A committed record made up by a test: key and payload laid out in one buffer as the broker does. */
record TestRecord(int partitionId, long position, long timestamp, String key, DirectBuffer buffer, int keyLength,
                  int payloadLength) implements CommittedRecord
{
    static TestRecord of(final int partitionId, final long position, final String key, final String payloadJson)
    {
        final byte[] keyBytes = key == null ? new byte[0] : key.getBytes(StandardCharsets.UTF_8);
        final byte[] payload = payloadJson.getBytes(StandardCharsets.UTF_8);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[keyBytes.length + payload.length]);
        buffer.putBytes(0, keyBytes);
        buffer.putBytes(keyBytes.length, payload);
        return new TestRecord(partitionId, position, 1_764_420_000_000L + position, key, buffer,
            key == null ? -1 : keyBytes.length, payload.length);
    }

    @Override
    public int keyOffset()
    {
        return 0;
    }

    @Override
    public int payloadOffset()
    {
        return Math.max(keyLength, 0);
    }
}
