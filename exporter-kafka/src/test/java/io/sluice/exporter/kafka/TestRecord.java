package io.sluice.exporter.kafka;

import io.sluice.exporter.spi.CommittedRecord;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;

/** A committed record made up by a test: key (or none) and JSON payload in one buffer, as the broker lays them out. */
final class TestRecord implements CommittedRecord
{
    private final int partitionId;
    private final long position;
    private final long timestamp;
    private final String key;
    private final UnsafeBuffer buffer;
    private final int keyLength;
    private final int payloadLength;

    TestRecord(final int partitionId, final long position, final String key, final String payload)
    {
        this.partitionId = partitionId;
        this.position = position;
        this.timestamp = 1_764_420_000_000L + position;
        this.key = key;
        final byte[] keyBytes = key == null ? new byte[0] : key.getBytes(StandardCharsets.UTF_8);
        final byte[] payloadBytes = payload.getBytes(StandardCharsets.UTF_8);
        final byte[] bytes = new byte[keyBytes.length + payloadBytes.length + 3];
        System.arraycopy(keyBytes, 0, bytes, 3, keyBytes.length); // not at 0: readers must honour the offsets
        System.arraycopy(payloadBytes, 0, bytes, 3 + keyBytes.length, payloadBytes.length);
        this.buffer = new UnsafeBuffer(bytes);
        this.keyLength = key == null ? -1 : keyBytes.length;
        this.payloadLength = payloadBytes.length;
    }

    @Override
    public int partitionId()
    {
        return partitionId;
    }

    @Override
    public long position()
    {
        return position;
    }

    @Override
    public long timestamp()
    {
        return timestamp;
    }

    @Override
    public String key()
    {
        return key;
    }

    @Override
    public DirectBuffer buffer()
    {
        return buffer;
    }

    @Override
    public int keyOffset()
    {
        return 3;
    }

    @Override
    public int keyLength()
    {
        return keyLength;
    }

    @Override
    public int payloadOffset()
    {
        return 3 + Math.max(keyLength, 0);
    }

    @Override
    public int payloadLength()
    {
        return payloadLength;
    }
}
