package io.sluice.broker.log;

import io.sluice.broker.log.codecs.RecordBodyEncoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;

class RecordFrameTest
{
    private final CRC32C crc = new CRC32C();
    private final UnsafeBuffer key = new UnsafeBuffer("key".getBytes(StandardCharsets.UTF_8));
    private final UnsafeBuffer payload = new UnsafeBuffer("{\"x\":1}".getBytes(StandardCharsets.UTF_8));

    @Test
    void aFrameWrittenAtAnOffsetReadsBackOverAnArrayOrADirectByteBuffer()
    {
        final int length = (int)RecordFrame.frameLength(3, 7);
        assertThat(length).isEqualTo(RecordFrame.HEADER_LENGTH + 3 + 4 + 7);
        for (final UnsafeBuffer buffer : new UnsafeBuffer[] {
            new UnsafeBuffer(new byte[length + 10]), new UnsafeBuffer(ByteBuffer.allocateDirect(length + 10))})
        {
            final RecordFrame frame = new RecordFrame().wrap(buffer, 5)
                .putRecord(11, 12, 13, key, 0, 3, payload, 0, 7).crc(crc);

            final RecordFrame read = new RecordFrame().wrap(buffer, 5);
            assertThat(read.frameLength()).isEqualTo(length);
            assertThat(RecordFrame.frameLengthOfField(buffer.getInt(5, java.nio.ByteOrder.LITTLE_ENDIAN))).isEqualTo(length);
            assertThat(read.raftIndex()).isEqualTo(11);
            assertThat(read.position()).isEqualTo(12);
            assertThat(read.timestamp()).isEqualTo(13);
            assertThat(buffer.getStringWithoutLengthUtf8(read.keyOffset(), read.keyLength())).isEqualTo("key");
            assertThat(buffer.getStringWithoutLengthUtf8(read.payloadOffset(), read.payloadLength())).isEqualTo("{\"x\":1}");
            assertThat(read.payloadOffset() + read.payloadLength()).isEqualTo(5 + length);
            assertThat(read.crcMatches(crc)).isTrue();
            assertThat(frame.crc()).isEqualTo(read.crc());
        }
    }

    @Test
    void aRecordWithoutAKeyReadsAsNoKeyAndHoldsNoKeyBytes()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[(int)RecordFrame.frameLength(RecordFrame.NO_KEY, 7)]);
        final RecordFrame frame = new RecordFrame().wrap(buffer, 0).putRecord(1, 2, 3, null, 0, 5, payload, 0, 7).crc(crc);

        assertThat(frame.keyLength()).isEqualTo(RecordFrame.NO_KEY);
        assertThat(frame.frameLength()).isEqualTo(buffer.capacity());
        assertThat(frame.payloadOffset()).isEqualTo(RecordFrame.HEADER_LENGTH + 4);
        assertThat(RecordFrame.frameLength(RecordFrame.NO_KEY, 0)).isEqualTo(RecordFrame.MIN_FRAME_LENGTH);
    }

    @Test
    void theCrcCoversEveryByteFromTheVersionOnButNotTheLengthOrItself()
    {
        final int length = (int)RecordFrame.frameLength(3, 7);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[length]);
        final RecordFrame frame = new RecordFrame().wrap(buffer, 0).putRecord(1, 2, 3, key, 0, 3, payload, 0, 7).crc(crc);
        for (int i = RecordFrame.CHECKED_OFFSET; i < length; i++)
        {
            buffer.putByte(i, (byte)~buffer.getByte(i));
            assertThat(frame.crcMatches(crc)).as("byte %d flipped", i).isFalse();
            buffer.putByte(i, (byte)~buffer.getByte(i));
        }
        assertThat(frame.crcMatches(crc)).isTrue();
        assertThat(RecordFrame.CHECKED_OFFSET).isEqualTo(RecordFrame.CRC_OFFSET + 4);
    }

    @Test
    void aBodyCopiedFromAnAppendBatchMakesTheSameFrameAsOneEncodedFromItsFields()
    {
        final UnsafeBuffer body = new UnsafeBuffer(new byte[64]);
        final int bodyLength = new RecordBodyEncoder().wrap(body, 9).timestamp(13).putKey(key, 0, 3)
            .putPayload(payload, 0, 7).encodedLength();
        final int length = (int)RecordFrame.frameLength(3, 7);
        assertThat(RecordFrame.frameLengthOfBody(bodyLength)).isEqualTo(length);
        final UnsafeBuffer copied = new UnsafeBuffer(new byte[length]);
        final UnsafeBuffer encoded = new UnsafeBuffer(new byte[length]);

        new RecordFrame().wrap(copied, 0)
            .putRecord(11, 12, body, 9, bodyLength, RecordBodyEncoder.BLOCK_LENGTH, RecordBodyEncoder.SCHEMA_VERSION).crc(crc);
        new RecordFrame().wrap(encoded, 0).putRecord(11, 12, 13, key, 0, 3, payload, 0, 7).crc(crc);

        assertThat(copied.byteArray()).isEqualTo(encoded.byteArray());
        final RecordFrame read = new RecordFrame().wrap(copied, 0);
        assertThat(read.version()).isEqualTo(RecordFrame.VERSION);
        assertThat(read.bodyVersion()).isEqualTo(RecordBodyEncoder.SCHEMA_VERSION);
        assertThat(read.isWellFormed()).isTrue();
    }

    @Test
    void aFrameWhoseBodyDoesNotEndAtTheFramesEndIsNotWellFormed()
    {
        final int length = (int)RecordFrame.frameLength(3, 7);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[length]);
        final RecordFrame frame = new RecordFrame().wrap(buffer, 0).putRecord(1, 2, 3, key, 0, 3, payload, 0, 7).crc(crc);
        assertThat(frame.isWellFormed()).isTrue();

        final int payloadLengthOffset = frame.payloadOffset() - 4;
        buffer.putInt(payloadLengthOffset, 6, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThat(frame.isWellFormed()).as("payload ends before the frame").isFalse();
        buffer.putInt(payloadLengthOffset, 1 << 20, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThat(frame.isWellFormed()).as("payload runs past the frame").isFalse();
        buffer.putInt(payloadLengthOffset, 7, java.nio.ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(frame.keyOffset() - 4, 1 << 20, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThat(frame.isWellFormed()).as("key runs past the frame").isFalse();
    }
}
