package io.sluice.broker.log;

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
    void aRecordWithoutAKeyStoresMinusOneAndNoKeyBytes()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[(int)RecordFrame.frameLength(RecordFrame.NO_KEY, 7)]);
        final RecordFrame frame = new RecordFrame().wrap(buffer, 0).putRecord(1, 2, 3, null, 0, 5, payload, 0, 7).crc(crc);

        assertThat(frame.keyLength()).isEqualTo(RecordFrame.NO_KEY);
        assertThat(frame.frameLength()).isEqualTo(buffer.capacity());
        assertThat(frame.payloadOffset()).isEqualTo(RecordFrame.HEADER_LENGTH + 4);
        assertThat(RecordFrame.frameLength(RecordFrame.NO_KEY, 0)).isEqualTo(RecordFrame.MIN_FRAME_LENGTH);
    }

    @Test
    void theCrcCoversEveryByteFromTheRaftIndexOnButNotTheLengthOrItself()
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
}
