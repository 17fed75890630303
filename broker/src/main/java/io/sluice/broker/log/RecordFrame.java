package io.sluice.broker.log;

import io.sluice.broker.log.codecs.RecordBodyDecoder;
import io.sluice.broker.log.codecs.RecordBodyEncoder;
import org.agrona.BitUtil;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The one door to a record frame of the {@link RecordLog}'s segments: every write and read of a frame goes
 * through this flyweight, so the layout below is stated once. Little-endian:
 * <pre>
 *   0  int32  frame length L (bytes after this field)
 *   4  int32  CRC32C of the L - 4 bytes after this field
 *   8  uint16 frame version, {@value #VERSION}: this layout
 *  10  uint16 the body's block length, as its writer encoded it (its SBE acting block length)
 *  12  uint16 the body's version: the broker-log schema version its writer encoded it with (SBE acting version)
 *  14  uint16 reserved, 0
 *  16  int64  Raft index of the entry that carried the record
 *  24  int64  position
 *  32  body   a RecordBody of broker-log-codecs.xml without a message header (int64 timestamp, uint32 key
 *             length K, K bytes key, uint32 payload length P, P bytes payload): the bytes an append batch
 *             carried, so the log writes them as they are; K = 0 is a record without a key
 * </pre>
 * The header is this class's; the body is the schema's, read and written only through its generated codecs at
 * the version and block length the header gives. Segments written before version 1 (no version field, the body's
 * fields in the header) are not read: their frames look intact (the CRC covers the same bytes), and the log refuses
 * to open a segment holding an intact frame it cannot read rather than cut it off.
 * <p>
 * {@link #wrap} a buffer at a frame's first byte, then get or put its fields; not thread-safe (one per user).
 */
public final class RecordFrame
{
    /** This layout's version, in every frame. */
    public static final int VERSION = 1;

    static final int LENGTH_OFFSET = 0;
    static final int CRC_OFFSET = 4;
    static final int VERSION_OFFSET = 8;
    static final int BODY_BLOCK_LENGTH_OFFSET = 10;
    static final int BODY_VERSION_OFFSET = 12;
    static final int RESERVED_OFFSET = 14;
    static final int RAFT_INDEX_OFFSET = 16;
    static final int POSITION_OFFSET = 24;
    static final int BODY_OFFSET = 32;

    /** The length field's own size: its value counts only the bytes after it. */
    public static final int LENGTH_FIELD_LENGTH = BitUtil.SIZE_OF_INT;
    /** Bytes before the key in a frame this writer writes: the header, the body's block and its key length. */
    public static final int HEADER_LENGTH = BODY_OFFSET + RecordBodyEncoder.BLOCK_LENGTH + RecordBodyEncoder.keyHeaderLength();
    /** The CRC covers the frame from here (the version) to its end. */
    public static final int CHECKED_OFFSET = VERSION_OFFSET;
    /** The key length of a record without a key. */
    public static final int NO_KEY = -1;
    /** The shortest frame this writer writes: no key, an empty payload. */
    public static final int MIN_FRAME_LENGTH = HEADER_LENGTH + RecordBodyEncoder.payloadHeaderLength();

    private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;
    private static final DirectBuffer NO_BYTES = new UnsafeBuffer(new byte[0]);

    private final RecordBodyDecoder bodyDecoder = new RecordBodyDecoder();
    private final RecordBodyEncoder bodyEncoder = new RecordBodyEncoder();
    private MutableDirectBuffer buffer;
    private int offset;

    /** Bytes of a whole frame (length field included) holding a key (none when 0 or negative) and a payload. */
    public static long frameLength(final int keyLength, final int payloadLength)
    {
        return (long)HEADER_LENGTH + Math.max(keyLength, 0) + RecordBodyEncoder.payloadHeaderLength() + payloadLength;
    }

    /** Bytes of a whole frame (length field included) around a body of {@code bodyLength} bytes. */
    public static long frameLengthOfBody(final int bodyLength)
    {
        return (long)BODY_OFFSET + bodyLength;
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

    /** The frame's layout version: {@link #VERSION} for every frame this class can read. */
    public int version()
    {
        return buffer.getShort(offset + VERSION_OFFSET, ORDER) & 0xFFFF;
    }

    public int bodyBlockLength()
    {
        return buffer.getShort(offset + BODY_BLOCK_LENGTH_OFFSET, ORDER) & 0xFFFF;
    }

    public int bodyVersion()
    {
        return buffer.getShort(offset + BODY_VERSION_OFFSET, ORDER) & 0xFFFF;
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
        return body().timestamp();
    }

    /** The key's length in bytes, {@link #NO_KEY} when the record has none. */
    public int keyLength()
    {
        final int length = body().keyLength();
        return length == 0 ? NO_KEY : length;
    }

    /** Offset of the key in the wrapped buffer. */
    public int keyOffset()
    {
        return body().limit() + RecordBodyDecoder.keyHeaderLength();
    }

    public int payloadLength()
    {
        final RecordBodyDecoder body = body();
        body.skipKey();
        return body.payloadLength();
    }

    /** Offset of the payload in the wrapped buffer. */
    public int payloadOffset()
    {
        final RecordBodyDecoder body = body();
        body.skipKey();
        return body.limit() + RecordBodyDecoder.payloadHeaderLength();
    }

    /**
     * Whether the frame can be read: of this layout's version, and its body's key and payload end exactly at the
     * frame's end. Its length field must have been checked against the bytes the buffer holds.
     */
    public boolean isWellFormed()
    {
        final int frameEnd = offset + frameLength();
        final int bodyBlockLength = bodyBlockLength();
        if (version() != VERSION || bodyBlockLength < RecordBodyDecoder.BLOCK_LENGTH ||
            (long)offset + BODY_OFFSET + bodyBlockLength + RecordBodyDecoder.keyHeaderLength() > frameEnd)
        {
            return false;
        }
        final RecordBodyDecoder body = body();
        final long keyEnd = (long)body.limit() + RecordBodyDecoder.keyHeaderLength() +
            (buffer.getInt(body.limit(), ORDER) & 0xFFFF_FFFFL);
        if (keyEnd + RecordBodyDecoder.payloadHeaderLength() > frameEnd)
        {
            return false;
        }
        final long payloadEnd = keyEnd + RecordBodyDecoder.payloadHeaderLength() +
            (buffer.getInt((int)keyEnd, ORDER) & 0xFFFF_FFFFL);
        return payloadEnd == frameEnd;
    }

    /**
     * Writes a whole frame but its CRC ({@link #crc(CRC32C)} after), copying its body from {@code body}: a
     * RecordBody of {@code length} bytes at {@code bodyOffset}, encoded with {@code bodyBlockLength} and
     * {@code bodyVersion}. The wrapped buffer must hold {@link #frameLengthOfBody} bytes from the offset. The one
     * copy a record's bytes take from an applied entry into the log.
     */
    public RecordFrame putRecord(
        final long raftIndex,
        final long position,
        final DirectBuffer body,
        final int bodyOffset,
        final int length,
        final int bodyBlockLength,
        final int bodyVersion)
    {
        putHeader(raftIndex, position, (int)frameLengthOfBody(length), bodyBlockLength, bodyVersion);
        buffer.putBytes(offset + BODY_OFFSET, body, bodyOffset, length);
        return this;
    }

    /**
     * Writes a whole frame but its CRC ({@link #crc(CRC32C)} after), encoding its body from a timestamp, key and
     * payload: the wrapped buffer must hold {@link #frameLength(int, int)} bytes from the offset. A null key or a
     * key length of 0 or less is no key.
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
        final int storedKeyLength = key != null && keyLength > 0 ? keyLength : 0;
        putHeader(raftIndex, position, (int)frameLength(storedKeyLength, payloadLength),
            RecordBodyEncoder.BLOCK_LENGTH, RecordBodyEncoder.SCHEMA_VERSION);
        bodyEncoder.wrap(buffer, offset + BODY_OFFSET).timestamp(timestamp);
        if (storedKeyLength > 0)
        {
            bodyEncoder.putKey(key, keyOffset, storedKeyLength);
        }
        else
        {
            bodyEncoder.putKey(NO_BYTES, 0, 0);
        }
        bodyEncoder.putPayload(payload, payloadOffset, payloadLength);
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
     * array or a {@link ByteBuffer} (as the log's are, a segment's mapping among them); a ByteBuffer's position and
     * limit are moved. Reads the bytes where they are: no copy.
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

    private void putHeader(
        final long raftIndex, final long position, final int frameLength, final int bodyBlockLength, final int bodyVersion)
    {
        buffer.putInt(offset + LENGTH_OFFSET, frameLength - LENGTH_FIELD_LENGTH, ORDER);
        buffer.putShort(offset + VERSION_OFFSET, (short)VERSION, ORDER);
        buffer.putShort(offset + BODY_BLOCK_LENGTH_OFFSET, (short)bodyBlockLength, ORDER);
        buffer.putShort(offset + BODY_VERSION_OFFSET, (short)bodyVersion, ORDER);
        buffer.putShort(offset + RESERVED_OFFSET, (short)0, ORDER);
        buffer.putLong(offset + RAFT_INDEX_OFFSET, raftIndex, ORDER);
        buffer.putLong(offset + POSITION_OFFSET, position, ORDER);
    }

    private RecordBodyDecoder body()
    {
        return bodyDecoder.wrap(buffer, offset + BODY_OFFSET, bodyBlockLength(), bodyVersion());
    }
}
