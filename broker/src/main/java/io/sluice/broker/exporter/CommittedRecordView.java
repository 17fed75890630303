package io.sluice.broker.exporter;

import io.sluice.exporter.spi.CommittedRecord;

import org.agrona.DirectBuffer;

/**
 * A reusable {@link CommittedRecord} flyweight over bytes someone else owns: {@link #wrap} points it at the next
 * record without allocating. Valid until the next wrap or until the owner reuses the bytes.
 */
public final class CommittedRecordView implements CommittedRecord
{
    private static final int PAYLOAD_PREVIEW_BYTES = 64;

    private final int partitionId;
    private long position;
    private long timestamp;
    private DirectBuffer buffer;
    private int keyOffset;
    private int keyLength;
    private int payloadOffset;
    private int payloadLength;

    public CommittedRecordView(final int partitionId)
    {
        this.partitionId = partitionId;
    }

    /** Points the view at a record; {@code keyLength} is -1 for a record without a key. */
    public CommittedRecordView wrap(
        final long position,
        final long timestamp,
        final DirectBuffer buffer,
        final int keyOffset,
        final int keyLength,
        final int payloadOffset,
        final int payloadLength)
    {
        this.position = position;
        this.timestamp = timestamp;
        this.buffer = buffer;
        this.keyOffset = keyOffset;
        this.keyLength = keyLength;
        this.payloadOffset = payloadOffset;
        this.payloadLength = payloadLength;
        return this;
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
        return keyLength < 0 ? null : buffer.getStringWithoutLengthUtf8(keyOffset, keyLength);
    }

    @Override
    public DirectBuffer buffer()
    {
        return buffer;
    }

    @Override
    public int keyOffset()
    {
        return keyOffset;
    }

    @Override
    public int keyLength()
    {
        return keyLength;
    }

    @Override
    public int payloadOffset()
    {
        return payloadOffset;
    }

    @Override
    public int payloadLength()
    {
        return payloadLength;
    }

    /** Names the record and shows the start of its payload, for log lines about an export that failed. */
    @Override
    public String toString()
    {
        final String preview = buffer == null ? "" :
            buffer.getStringWithoutLengthUtf8(payloadOffset, Math.min(payloadLength, PAYLOAD_PREVIEW_BYTES));
        return "record " + position + " of partition " + partitionId + " (" + preview + ")";
    }
}
