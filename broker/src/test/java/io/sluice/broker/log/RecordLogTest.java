package io.sluice.broker.log;

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

    /**
     * A segment as the log wrote it before frames had their own flyweight (two records of Raft entry 7: key "k1",
     * then no key; payload {"a":1}): it still opens, reads, and a log writes the same records to the same bytes.
     */
    @Test
    @Timeout(10)
    void theFrameLayoutIsByteForByteTheOneSegmentsAlreadyHold() throws IOException
    {
        final String written = "2d0000002a03799b070000000000000001000000000000007b68e5cf8b010000020000006b3107000000" +
            "7b2261223a317d2b000000fd88d85f070000000000000002000000000000007c68e5cf8b010000ffffffff070000007b2261223a317d";
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
        assertThat(Files.readAllBytes(fresh.resolve("segment-00000000000000000001.log"))).isEqualTo(hex(written));
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
