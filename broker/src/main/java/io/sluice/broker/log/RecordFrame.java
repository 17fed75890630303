package io.sluice.broker.log;

import org.agrona.BitUtil;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The one door to a record frame of the {@link RecordLog}'s segments: every write and read of a frame goes
 * through this flyweight, so the layout below is stated once. Little-endian:
 * <pre>
 *   0  int32 frame length L (bytes after this field)
 *   4  int32 CRC32C of the L - 4 bytes after this field
 *   8  int64 Raft index of the entry that carried the record
 *  16  int64 position
 *  24  int64 timestamp (epoch millis)
 *  32  int32 key length K, -1 when the record has no key
 *  36  K bytes key (UTF-8)
 *  .   int32 payload length P
 *  .   P bytes payload
 * </pre>
 * The layout has no version field: it is the only one segments have ever held. A change would need one (in the
 * segment file's name or a header) and a reader for both.
 * <p>
 * {@link #wrap} a buffer at a frame's first byte, then get or put its fields; not thread-safe (one per user).
 */
public final class RecordFrame
{
    static final int LENGTH_OFFSET = 0;
    static final int CRC_OFFSET = 4;
    static final int RAFT_INDEX_OFFSET = 8;
    static final int POSITION_OFFSET = 16;
    static final int TIMESTAMP_OFFSET = 24;
    static final int KEY_LENGTH_OFFSET = 32;
    static final int KEY_OFFSET = 36;

    /** The length field's own size: its value counts only the bytes after it. */
    public static final int LENGTH_FIELD_LENGTH = BitUtil.SIZE_OF_INT;
    /** Bytes before the key: every fixed field. */
    public static final int HEADER_LENGTH = KEY_OFFSET;
    /** The CRC covers the frame from here (the Raft index) to its end. */
    public static final int CHECKED_OFFSET = RAFT_INDEX_OFFSET;
    /** The key length of a record without a key. */
    public static final int NO_KEY = -1;
    /** The shortest frame: no key, an empty payload. */
    public static final int MIN_FRAME_LENGTH = HEADER_LENGTH + BitUtil.SIZE_OF_INT;

    private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    private MutableDirectBuffer buffer;
    private int offset;

    /** Bytes of a whole frame (length field included) holding a key (none when negative) and a payload. */
    public static long frameLength(final int keyLength, final int payloadLength)
    {
        return (long)HEADER_LENGTH + Math.max(keyLength, 0) + BitUtil.SIZE_OF_INT + payloadLength;
    }

    /** The whole frame's bytes given its length field's value (as read from a segment). */
    public static long frameLengthOfField(final int lengthField)
    {
        return (long)lengthField + LENGTH_FIELD_LENGTH;
    }

    public RecordFrame wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** Offset of the frame's first byte in the wrapped buffer. */
    public int offset()
    {
        return offset;
    }

    /** The whole frame's bytes, length field included. */
    public int frameLength()
    {
        return buffer.getInt(offset + LENGTH_OFFSET, ORDER) + LENGTH_FIELD_LENGTH;
    }

    public int crc()
    {
        return buffer.getInt(offset + CRC_OFFSET, ORDER);
    }

    public long raftIndex()
    {
        return buffer.getLong(offset + RAFT_INDEX_OFFSET, ORDER);
    }

    public long position()
    {
        return buffer.getLong(offset + POSITION_OFFSET, ORDER);
    }

    public long timestamp()
    {
        return buffer.getLong(offset + TIMESTAMP_OFFSET, ORDER);
    }

    /** The key's length in bytes, {@link #NO_KEY} when the record has none. */
    public int keyLength()
    {
        return buffer.getInt(offset + KEY_LENGTH_OFFSET, ORDER);
    }

    /** Offset of the key in the wrapped buffer. */
    public int keyOffset()
    {
        return offset + KEY_OFFSET;
    }

    public int payloadLength()
    {
        return buffer.getInt(payloadLengthOffset(), ORDER);
    }

    /** Offset of the payload in the wrapped buffer. */
    public int payloadOffset()
    {
        return payloadLengthOffset() + BitUtil.SIZE_OF_INT;
    }

    /**
     * Writes a whole frame but its CRC ({@link #crc(CRC32C)} after): the wrapped buffer must hold
     * {@link #frameLength(int, int)} bytes from the offset. A null key or a key length of 0 or less is no key.
     */
    public RecordFrame putRecord(
        final long raftIndex,
        final long position,
        final long timestamp,
        final DirectBuffer key,
        final int keyOffset,
        final int keyLength,
        final DirectBuffer payload,
        final int payloadOffset,
        final int payloadLength)
    {
        final boolean hasKey = key != null && keyLength > 0;
        buffer.putInt(offset + LENGTH_OFFSET,
            (int)frameLength(hasKey ? keyLength : NO_KEY, payloadLength) - LENGTH_FIELD_LENGTH, ORDER);
        buffer.putLong(offset + RAFT_INDEX_OFFSET, raftIndex, ORDER);
        buffer.putLong(offset + POSITION_OFFSET, position, ORDER);
        buffer.putLong(offset + TIMESTAMP_OFFSET, timestamp, ORDER);
        buffer.putInt(offset + KEY_LENGTH_OFFSET, hasKey ? keyLength : NO_KEY, ORDER);
        if (hasKey)
        {
            buffer.putBytes(offset + KEY_OFFSET, key, keyOffset, keyLength);
        }
        final int payloadLengthOffset = payloadLengthOffset();
        buffer.putInt(payloadLengthOffset, payloadLength, ORDER);
        buffer.putBytes(payloadLengthOffset + BitUtil.SIZE_OF_INT, payload, payloadOffset, payloadLength);
        return this;
    }

    /** Computes the CRC of the frame's checked bytes and stores it. */
    public RecordFrame crc(final CRC32C crc)
    {
        buffer.putInt(offset + CRC_OFFSET, computeCrc(crc), ORDER);
        return this;
    }

    /** Whether the stored CRC matches the frame's bytes; its length field must have been checked against them. */
    public boolean crcMatches(final CRC32C crc)
    {
        return computeCrc(crc) == crc();
    }

    /**
     * CRC32C of the bytes from {@link #CHECKED_OFFSET} to the frame's end. The wrapped buffer must be over a byte
     * array or a {@link ByteBuffer} (as the log's are); a ByteBuffer's position and limit are moved.
     */
    int computeCrc(final CRC32C crc)
    {
        final int start = buffer.wrapAdjustment() + offset + CHECKED_OFFSET;
        final int length = frameLength() - CHECKED_OFFSET;
        crc.reset();
        final byte[] array = buffer.byteArray();
        final ByteBuffer byteBuffer = buffer.byteBuffer();
        if (array != null)
        {
            crc.update(array, start, length);
        }
        else if (byteBuffer != null)
        {
            byteBuffer.clear().position(start).limit(start + length);
            crc.update(byteBuffer);
        }
        else
        {
            throw new IllegalStateException("a record frame's CRC needs a buffer over an array or a ByteBuffer");
        }
        return (int)crc.getValue();
    }

    private int payloadLengthOffset()
    {
        return offset + KEY_OFFSET + Math.max(keyLength(), 0);
    }
}
