package io.sluice.broker.log;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The record log on a disk that has no room left: a seam in place of the disk ({@link SegmentSpace#reserve} failing
 * as {@code write(2)} does with ENOSPC), so the point where space runs out is exact.
 */
class RecordLogFullDiskTest
{
    private static final byte[] PAYLOAD = "x".repeat(1000).getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    @Test
    @Timeout(20)
    void anAppendThatFindsNoDiskSpaceFailsCountingNothingAndAppendsGoOnOnceSpaceIsBack() throws IOException
    {
        final FullableDisk disk = new FullableDisk(-1);
        final long written;
        try (RecordLog log = RecordLog.open(dir, 16L * 1024 * 1024, 0, 0, disk))
        {
            long position = append(log, 1);
            disk.full.set(true);
            IOException refused = null;
            while (refused == null)
            {
                try
                {
                    position = append(log, position + 1);
                }
                catch (final IOException e)
                {
                    refused = e;
                }
            }
            assertThat(refused).hasMessageContaining("No space left on device");
            written = position;
            assertThat(written).as("records that fit the first reservation").isGreaterThan(100);
            assertThat(log.lastPosition()).isEqualTo(written);
            assertThat(readPositions(log)).hasSize((int)written);
            assertThatThrownBy(() -> append(log, written + 1)).hasMessageContaining("No space left on device");
            assertThat(log.lastPosition()).isEqualTo(written);

            disk.full.set(false);
            assertThat(append(log, written + 1)).isEqualTo(written + 1);
            assertThat(readPositions(log)).hasSize((int)written + 1);
        }
        try (RecordLog log = RecordLog.open(dir, 16L * 1024 * 1024, 0, 0, disk))
        {
            assertThat(log.lastPosition()).isEqualTo(written + 1);
            assertThat(readPositions(log)).hasSize((int)written + 1);
        }
    }

    @Test
    @Timeout(20)
    void anAppendWaitingForDiskSpaceLetsReadersReadAndCompletesOnceSpaceIsBack() throws Exception
    {
        final FullableDisk disk = new FullableDisk(5);
        try (RecordLog log = RecordLog.open(dir, 16L * 1024 * 1024, 0, 0, disk))
        {
            append(log, 1);
            disk.full.set(true);
            final CompletableFuture<Long> appending = CompletableFuture.supplyAsync(() -> appendUntilSpaceCameBack(log, disk));
            assertThat(disk.waits.await(10, TimeUnit.SECONDS)).isTrue();
            final long held = log.lastPosition();
            assertThat(readPositions(log)).as("readers go on while an append waits").hasSize((int)held);
            assertThat(appending).isNotDone();
            assertThat(log.lastPosition()).isEqualTo(held);

            disk.full.set(false);
            final long last = appending.get(10, TimeUnit.SECONDS);
            assertThat(last).as("the waiting append went in").isEqualTo(held + 1);
            assertThat(disk.spaceBack.get()).isEqualTo(1);
            assertThat(readPositions(log)).hasSize((int)last);
        }
    }

    @Test
    @Timeout(20)
    void closingTheLogEndsAnAppendWaitingForSpaceAndTheSegmentOpensWhole() throws Exception
    {
        final FullableDisk disk = new FullableDisk(5);
        final long held;
        try (RecordLog log = RecordLog.open(dir, 16L * 1024 * 1024, 0, 0, disk))
        {
            append(log, 1);
            disk.full.set(true);
            final CompletableFuture<Long> appending = CompletableFuture.supplyAsync(() -> appendUntilSpaceCameBack(log, disk));
            assertThat(disk.waits.await(10, TimeUnit.SECONDS)).isTrue();
            held = log.lastPosition();
            log.close();
            assertThatThrownBy(() -> appending.get(10, TimeUnit.SECONDS)).hasMessageContaining("is closed");
        }
        disk.full.set(false);
        try (RecordLog log = RecordLog.open(dir, 16L * 1024 * 1024, 0, 0, disk))
        {
            assertThat(log.lastPosition()).isEqualTo(held);
            assertThat(readPositions(log)).hasSize((int)held);
        }
    }

    @Test
    @Timeout(20)
    void theActiveSegmentGrowsOnlyOverSpaceReservedOnDisk() throws IOException
    {
        final List<long[]> reserved = new ArrayList<>();
        final SegmentSpace recording = new FullableDisk(-1)
        {
            @Override
            public void reserve(final FileChannel channel, final long from, final long to) throws IOException
            {
                reserved.add(new long[]{from, to});
                super.reserve(channel, from, to);
            }
        };
        try (RecordLog log = RecordLog.open(dir, 64L * 1024 * 1024, 0, 0, recording))
        {
            for (int i = 1; i <= 20_000; i++)
            {
                append(log, i);
            }
            long end = 0;
            for (final long[] range : reserved)
            {
                assertThat(range[0]).as("each reservation starts where the last ended").isEqualTo(end);
                assertThat(range[1] - range[0]).isLessThanOrEqualTo(RecordLog.MAX_GROWTH_BYTES);
                end = range[1];
            }
            try (Stream<Path> files = Files.list(dir))
            {
                assertThat(files.mapToLong((f) -> f.toFile().length()).sum()).isEqualTo(end);
            }
        }
    }

    /** Appends one record after another until one had to wait for space and went in; returns its position. */
    private static long appendUntilSpaceCameBack(final RecordLog log, final FullableDisk disk)
    {
        long position = log.lastPosition();
        while (disk.spaceBack.get() == 0)
        {
            position = appendUnchecked(log, position + 1);
        }
        return position;
    }

    private static long appendUnchecked(final RecordLog log, final long raftIndex)
    {
        try
        {
            return append(log, raftIndex);
        }
        catch (final IOException e)
        {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static long append(final RecordLog log, final long raftIndex) throws IOException
    {
        final long position = log.append(raftIndex, raftIndex, null, 0, 0, new UnsafeBuffer(PAYLOAD), 0, PAYLOAD.length);
        log.flushWrites();
        return position;
    }

    private static List<Long> readPositions(final RecordLog log) throws IOException
    {
        final List<Long> positions = new ArrayList<>();
        long next = log.firstPosition();
        int read;
        while ((read = log.read(next, 100, (position, timestamp, buffer, keyOffset, keyLength, payloadOffset,
            payloadLength) ->
        {
            assertThat(payloadLength).isEqualTo(PAYLOAD.length);
            positions.add(position);
        })) > 0)
        {
            next += read;
        }
        for (int i = 0; i < positions.size(); i++)
        {
            assertThat(positions.get(i)).isEqualTo(i + 1L);
        }
        return positions;
    }

    /** Zeros on a real file, refused as a full disk refuses them while {@code full} is set. */
    private static class FullableDisk implements SegmentSpace
    {
        final AtomicBoolean full = new AtomicBoolean();
        final AtomicInteger spaceBack = new AtomicInteger();
        final CountDownLatch waits = new CountDownLatch(1);
        private final long waitMs;

        FullableDisk(final long waitMs)
        {
            this.waitMs = waitMs;
        }

        @Override
        public void reserve(final FileChannel channel, final long from, final long to) throws IOException
        {
            if (full.get())
            {
                throw new IOException("No space left on device");
            }
            SegmentSpace.zeros(channel, from, to);
        }

        @Override
        public long onNoSpace(final Path file, final IOException cause)
        {
            waits.countDown();
            return waitMs;
        }

        @Override
        public void onSpaceBack(final Path file)
        {
            spaceBack.incrementAndGet();
        }
    }
}
