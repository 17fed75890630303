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
