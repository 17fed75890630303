package io.sluice.broker.log;

import io.sluice.broker.Allocations;
import io.sluice.broker.log.codecs.RecordBodyEncoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RecordLogTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(10)
    void positionsAreDenseAndReadableByRangeAcrossSegmentsAndReopen() throws IOException
    {
        try (RecordLog log = RecordLog.open(dir, 1024, 0, 0))
        {
            for (int i = 1; i <= 100; i++)
            {
                assertThat(append(log, i, "k" + i, "{\"n\":" + i + "}")).isEqualTo(i);
            }
            assertThat(log.sealedSegmentFiles()).isNotEmpty();
            assertThat(readAll(log, 1)).hasSize(100);
        }
        try (RecordLog log = RecordLog.open(dir, 1024, 0, 0))
        {
            assertThat(log.lastPosition()).isEqualTo(100);
            assertThat(log.lastRaftIndex()).isEqualTo(100);
            final List<String> payloads = readAll(log, 42);
            assertThat(payloads).hasSize(59);
            assertThat(payloads.get(0)).isEqualTo("k42={\"n\":42}");
            assertThat(append(log, 101, null, "{}")).isEqualTo(101);
            assertThat(readAll(log, 101)).containsExactly("null={}");
        }
    }

    @Test
    @Timeout(10)
    void tornTailOfTheActiveSegmentIsCutOffOnOpen() throws IOException
    {
        try (RecordLog log = RecordLog.open(dir, 1 << 20, 0, 0))
        {
            for (int i = 1; i <= 5; i++)
            {
                append(log, i, "k", "{}");
            }
        }
        final Path segment;
        try (Stream<Path> files = Files.list(dir))
        {
            segment = files.filter((p) -> p.toString().endsWith(".log")).findFirst().orElseThrow();
        }
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.WRITE))
        {
            channel.truncate(channel.size() - 3);
        }
        try (RecordLog log = RecordLog.open(dir, 1 << 20, 0, 0))
        {
            assertThat(log.lastPosition()).isEqualTo(4);
            assertThat(log.lastRaftIndex()).isEqualTo(4);
            assertThat(append(log, 5, "k", "{}")).isEqualTo(5);
        }
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.WRITE))
        {
            channel.write(ByteBuffer.wrap(new byte[] {9}), 40); // corrupt the first record
        }
        try (RecordLog log = RecordLog.open(dir, 1 << 20, 0, 0))
        {
            assertThat(log.lastPosition()).as("everything from the corrupt frame on is dropped").isZero();
        }
    }

    @Test
    @Timeout(10)
    void bufferedRecordsAreReadableOnlyOnceFlushedInOneWrite() throws IOException
    {
        try (RecordLog log = RecordLog.open(dir, 1 << 20, 0, 0))
        {
            final UnsafeBuffer payload = new UnsafeBuffer("{}".getBytes(StandardCharsets.UTF_8));
            log.append(7, 1, null, 0, -1, payload, 0, 2);
            log.append(7, 2, null, 0, -1, payload, 0, 2);
            assertThat(log.lastPosition()).isEqualTo(2);
            assertThat(log.read(1, 10, (p, t, b, ko, kl, po, pl) ->
            {
            })).isZero();
            log.flushWrites();
            assertThat(log.lastRaftIndex()).isEqualTo(7);
            assertThat(readAll(log, 1)).hasSize(2);
        }
    }

    @Test
    @Timeout(10)
    void compactionDeletesOnlyWholeSealedSegmentsBelowTheFloor() throws IOException
    {
        try (RecordLog log = RecordLog.open(dir, 1024, 0, 0))
        {
            for (int i = 1; i <= 100; i++)
            {
                append(log, i, "k" + i, "{\"payload\":\"" + "x".repeat(20) + "\"}");
            }
            log.roll();
            final int sealed = log.sealedSegmentFiles().size();
            log.compact(50);
            assertThat(log.firstPosition()).isLessThanOrEqualTo(50L).isGreaterThan(1L);
            assertThat(log.sealedSegmentFiles().size()).isLessThan(sealed);
            assertThat(readAll(log, 50)).hasSize(51);
            assertThatThrownBy(() -> log.read(1, 10, (p, t, b, ko, kl, po, pl) ->
            {
            })).isInstanceOf(IOException.class).hasMessageContaining("no longer held");
        }
        try (RecordLog log = RecordLog.open(dir, 1024, 100, 100))
        {
            assertThat(log.lastPosition()).isEqualTo(100);
            assertThat(log.firstPosition()).isGreaterThan(1L);
        }
    }

    @Test
    @Timeout(10)
    void aRecordAppendedButNotYetFlushedIsHeldNotCompacted() throws IOException
    {
        try (RecordLog log = RecordLog.open(dir.resolve("pending"), 1 << 20, 0, 0))
        {
            assertThat(log.firstPosition()).as("empty").isEqualTo(1);
            final UnsafeBuffer payload = new UnsafeBuffer("{\"a\":1}".getBytes(StandardCharsets.UTF_8));
            log.append(3, 1L, null, 0, -1, payload, 0, payload.capacity());
            assertThat(log.lastPosition()).isEqualTo(1);
            assertThat(log.firstPosition()).as("appended, not flushed: still held").isEqualTo(1);
            log.flushWrites();
            assertThat(log.firstPosition()).isEqualTo(1);
        }
    }

    /**
     * A segment of frame version 1, its bytes (CRCs included) worked out from RecordFrame's layout by hand, not by
     * the log: two records of Raft entry 7, key "k1", then no key, payload {"a":1}. It opens and reads, and a log
     * writes the same records to the same bytes, so a change to the layout cannot pass unnoticed.
     */
    @Test
    @Timeout(10)
    void theFrameLayoutIsByteForByteTheOneSegmentsAlreadyHold() throws IOException
    {
        final String written = "35000000ef59e6360100080004000000070000000000000001000000000000007b68e5cf8b010000" +
            "020000006b31070000007b2261223a317d330000000330f9cf010008000400000007000000000000000200000000000000" +
            "7c68e5cf8b01000000000000070000007b2261223a317d";
        final Path old = dir.resolve("old");
        Files.createDirectories(old);
        Files.write(old.resolve("segment-00000000000000000001.log"), hex(written));
        try (RecordLog log = RecordLog.open(old, 1 << 20, 0, 0))
        {
            assertThat(log.lastPosition()).isEqualTo(2);
            assertThat(log.lastRaftIndex()).isEqualTo(7);
            final List<String> records = new ArrayList<>();
            log.read(1, 10, (position, timestamp, buffer, keyOffset, keyLength, payloadOffset, payloadLength) ->
                records.add(position + "@" + timestamp + " " +
                    (keyLength < 0 ? "null" : buffer.getStringWithoutLengthUtf8(keyOffset, keyLength)) + "=" +
                    buffer.getStringWithoutLengthUtf8(payloadOffset, payloadLength)));
            assertThat(records).containsExactly("1@1700000000123 k1={\"a\":1}", "2@1700000000124 null={\"a\":1}");
        }

        final Path fresh = dir.resolve("new");
        try (RecordLog log = RecordLog.open(fresh, 1 << 20, 0, 0))
        {
            final UnsafeBuffer key = new UnsafeBuffer("k1".getBytes(StandardCharsets.UTF_8));
            final UnsafeBuffer payload = new UnsafeBuffer("{\"a\":1}".getBytes(StandardCharsets.UTF_8));
            log.append(7, 1_700_000_000_123L, key, 0, 2, payload, 0, payload.capacity());
            log.append(7, 1_700_000_000_124L, null, 0, -1, payload, 0, payload.capacity());
            log.flushWrites();
        }
        assertThat(Files.readAllBytes(fresh.resolve("segment-00000000000000000001.log")))
            .isEqualTo(withBodyVersion(hex(written), io.sluice.broker.log.codecs.RecordBodyEncoder.SCHEMA_VERSION));
    }

    /**
     * The same frames with the body version (offset 12) a writer of broker-log schema {@code version} puts there, and
     * their CRCs (CRC32C from offset 8 to the frame's end) worked out again: the layout is unchanged by a schema bump.
     */
    private static byte[] withBodyVersion(final byte[] segment, final int version)
    {
        final java.nio.ByteBuffer frames = java.nio.ByteBuffer.wrap(segment.clone()).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        int offset = 0;
        while (offset + 8 <= frames.capacity())
        {
            final int length = frames.getInt(offset);
            frames.putShort(offset + 12, (short)version);
            final java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
            crc.update(frames.array(), offset + 8, length - 4);
            frames.putInt(offset + 4, (int)crc.getValue());
            offset += 4 + length;
        }
        return frames.array();
    }

    /**
     * The copy the log used to make into its write buffer: a record's body goes from the caller's buffer (a view of
     * the applied entry) straight into the segment. A 4 MiB record written through any buffer of ours, or through
     * the JDK's temporary direct buffer for a heap buffer written to a channel, would allocate at least its size.
     */
    @Test
    @Timeout(20)
    void aRecordIsCopiedFromTheCallersBufferStraightIntoTheSegment() throws Exception
    {
        final byte[] payload = ("{\"p\":\"" + "x".repeat(4 << 20) + "\"}").getBytes(StandardCharsets.UTF_8);
        final UnsafeBuffer body = new UnsafeBuffer(new byte[(int)RecordFrame.frameLength(3, payload.length)]);
        final int bodyLength = new RecordBodyEncoder().wrap(body, 0).timestamp(5).key("big")
            .putPayload(payload, 0, payload.length).encodedLength();
        try (RecordLog log = RecordLog.open(dir, 1 << 20, 0, 0))
        {
            append(log, 1, "k", "{}"); // the classes loaded and the segment mapped, outside what is measured

            final Allocations.Allocated allocated = Allocations.of(() ->
            {
                log.append(2, body, 0, bodyLength, RecordBodyEncoder.BLOCK_LENGTH, RecordBodyEncoder.SCHEMA_VERSION);
                log.flushWrites();
            });

            assertThat(allocated.heapBytes()).as("heap bytes allocated writing a 4 MiB record").isLessThan(256 * 1024);
            assertThat(allocated.directBytes()).as("direct bytes allocated writing a 4 MiB record").isLessThan(256 * 1024);
            final byte[] read = new byte[payload.length];
            log.read(2, 1, (position, timestamp, buffer, keyOffset, keyLength, payloadOffset, payloadLength) ->
            {
                assertThat(buffer.getStringWithoutLengthUtf8(keyOffset, keyLength)).isEqualTo("big");
                assertThat(timestamp).isEqualTo(5);
                buffer.getBytes(payloadOffset, read, 0, payloadLength);
            });
            assertThat(read).isEqualTo(payload);
        }
    }

    /** The mapping runs ahead of the records; a crash leaves that part of the file as zeros, which open cuts off. */
    @Test
    @Timeout(10)
    void aZeroTailTheMappingLeftAfterACrashIsCutOffOnOpen() throws IOException
    {
        try (RecordLog log = RecordLog.open(dir, 1 << 20, 0, 0))
        {
            for (int i = 1; i <= 3; i++)
            {
                append(log, i, "k" + i, "{}");
            }
        }
        final Path segment = onlySegment();
        final long records = Files.size(segment);
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.WRITE))
        {
            channel.write(ByteBuffer.allocate(64 * 1024), records);
        }
        try (RecordLog log = RecordLog.open(dir, 1 << 20, 0, 0))
        {
            assertThat(log.lastPosition()).isEqualTo(3);
            assertThat(Files.size(segment)).isEqualTo(records);
            assertThat(append(log, 4, "k4", "{}")).isEqualTo(4);
        }
        assertThat(Files.size(segment)).as("closed: the file holds its records and nothing else").isGreaterThan(records)
            .isLessThan(records + 100);
        try (RecordLog log = RecordLog.open(dir, 1 << 20, 0, 0))
        {
            assertThat(readAll(log, 1)).containsExactly("k1={}", "k2={}", "k3={}", "k4={}");
        }
    }

    /** An intact frame of a layout this broker does not read (a newer one's) stops the open and is never cut off. */
    @Test
    @Timeout(10)
    void anIntactFrameOfAnotherVersionStopsTheOpenAndIsKept() throws IOException
    {
        try (RecordLog log = RecordLog.open(dir, 1 << 20, 0, 0))
        {
            append(log, 1, "k", "{}");
            append(log, 2, "k", "{}");
        }
        final Path segment = onlySegment();
        final byte[] bytes = Files.readAllBytes(segment);
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        final RecordFrame second = new RecordFrame().wrap(buffer, new RecordFrame().wrap(buffer, 0).frameLength());
        buffer.putShort(second.offset() + RecordFrame.VERSION_OFFSET, (short)2, java.nio.ByteOrder.LITTLE_ENDIAN);
        second.crc(new java.util.zip.CRC32C());
        Files.write(segment, bytes);

        assertThatThrownBy(() -> RecordLog.open(dir, 1 << 20, 0, 0)).isInstanceOf(IOException.class)
            .hasMessageContaining("version 2").hasMessageContaining("cannot read");
        assertThat(Files.readAllBytes(segment)).isEqualTo(bytes);
    }

    /**
     * A segment as the log wrote it before frames had a version (two records of Raft entry 7, key "k1", then no key,
     * payload {"a":1}): its CRCs cover the same bytes as a version 1 frame's, so its frames look intact; the open
     * stops on them and leaves the file as it was, rather than cutting it off as a torn tail.
     */
    @Test
    @Timeout(10)
    void aSegmentWrittenBeforeFramesHadAVersionStopsTheOpenAndIsKept() throws IOException
    {
        final byte[] old = hex("2d0000002a03799b070000000000000001000000000000007b68e5cf8b010000020000006b3107000000" +
            "7b2261223a317d2b000000fd88d85f070000000000000002000000000000007c68e5cf8b010000ffffffff070000007b2261223a317d");
        final Path segment = dir.resolve("segment-00000000000000000001.log");
        Files.write(segment, old);

        assertThatThrownBy(() -> RecordLog.open(dir, 1 << 20, 0, 0)).isInstanceOf(IOException.class)
            .hasMessageContaining("cannot read");
        assertThat(Files.readAllBytes(segment)).isEqualTo(old);
    }

    private Path onlySegment() throws IOException
    {
        try (Stream<Path> files = Files.list(dir))
        {
            return files.filter((p) -> p.toString().endsWith(".log")).findFirst().orElseThrow();
        }
    }

    private static byte[] hex(final String hex)
    {
        final byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++)
        {
            bytes[i] = (byte)Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return bytes;
    }

    private static long append(final RecordLog log, final long raftIndex, final String key, final String payload)
        throws IOException
    {
        final byte[] keyBytes = key == null ? new byte[0] : key.getBytes(StandardCharsets.UTF_8);
        final byte[] payloadBytes = payload.getBytes(StandardCharsets.UTF_8);
        final long position = log.append(raftIndex, 1000 + raftIndex, new UnsafeBuffer(keyBytes), 0,
            key == null ? -1 : keyBytes.length, new UnsafeBuffer(payloadBytes), 0, payloadBytes.length);
        log.flushWrites();
        return position;
    }

    private static List<String> readAll(final RecordLog log, final long from) throws IOException
    {
        final List<String> out = new ArrayList<>();
        long next = from;
        while (true)
        {
            final long expected = next;
            final int read = log.read(next, 7, (position, timestamp, buffer, keyOffset, keyLength, payloadOffset,
                payloadLength) ->
            {
                assertThat(position).isEqualTo(expected + out.size() - (expected - from));
                assertThat(timestamp).isIn(1000 + position, 1L, 2L);
                final String key = keyLength < 0 ? "null" : buffer.getStringWithoutLengthUtf8(keyOffset, keyLength);
                out.add(key + "=" + buffer.getStringWithoutLengthUtf8(payloadOffset, payloadLength));
            });
            if (read == 0)
            {
                return out;
            }
            next += read;
        }
    }
}
