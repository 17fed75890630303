package io.sluice.broker.disk;

import io.sluice.broker.log.SegmentSpace;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Keeps a broker off a full disk: refuses new appends ({@link #refusal()}) while the volume of its data directory is
 * past the {@link DiskWatermark}, or while a segment found no space at all (a disk filled by something else, or a
 * watermark set too high), and takes them again by itself once space is back.
 * <p>
 * Only appends are refused: everything else a broker writes (exporter acknowledgements, pause and resume in the
 * control group, backfill entries, snapshots, which compact the log) is small, and must go on so that a resume can
 * free the disk. For the case where the disk is really full, the guard holds a headroom file in the broker's
 * directory ({@value #HEADROOM_FILE}) and deletes it when a segment finds no space: that gives the bookkeeping, and the
 * append already committed, the room they need; it is made again once the volume has room for it.
 * <p>
 * Thread-safety: every method is safe from any thread; the volume is read at most every {@code refreshMs}.
 */
public final class DiskGuard
{
    private static final Logger LOG = LoggerFactory.getLogger(DiskGuard.class);
    static final String HEADROOM_FILE = "disk-headroom";
    static final long MAX_HEADROOM_BYTES = 16L * 1024 * 1024;
    /** How long an append that found no space waits before it tries again. */
    static final long NO_SPACE_RETRY_MS = 500;

    private final int brokerId;
    private final Path dataDir;
    private final DiskWatermark watermark;
    private final Volume volume;
    private final LongSupplier nanoClock;
    private final long refreshNs;
    private final AtomicLong refused = new AtomicLong();
    private final Path headroom;
    private volatile long totalBytes;
    private volatile long freeBytes;
    private volatile long refreshedAtNs;
    private volatile boolean refreshedOnce;
    private volatile boolean noSpace;
    private volatile boolean past;

    /** The disk space of a volume: a seam so tests can fill one exactly. */
    public interface Volume
    {
        long totalBytes() throws IOException;

        long freeBytes() throws IOException;

        /** The volume holding {@code directory}, as its file system reports it (space usable by this process). */
        static Volume of(final Path directory) throws IOException
        {
            final java.nio.file.FileStore store = Files.getFileStore(directory);
            return new Volume()
            {
                @Override
                public long totalBytes() throws IOException
                {
                    return store.getTotalSpace();
                }

                @Override
                public long freeBytes() throws IOException
                {
                    return store.getUsableSpace();
                }
            };
        }
    }

    public DiskGuard(
        final int brokerId,
        final Path dataDir,
        final DiskWatermark watermark,
        final Volume volume,
        final LongSupplier nanoClock,
        final long refreshMs)
    {
        this.brokerId = brokerId;
        this.dataDir = dataDir;
        this.watermark = watermark;
        this.volume = volume;
        this.nanoClock = nanoClock;
        this.refreshNs = refreshMs * 1_000_000L;
        this.headroom = dataDir.resolve(HEADROOM_FILE);
    }

    /** A guard over the volume of {@code dataDir}, read at most every 250 ms; makes the headroom file. */
    public static DiskGuard start(final int brokerId, final Path dataDir, final DiskWatermark watermark)
        throws IOException
    {
        Files.createDirectories(dataDir);
        final DiskGuard guard = new DiskGuard(brokerId, dataDir, watermark, Volume.of(dataDir), System::nanoTime, 250);
        guard.refresh();
        final String refusal = guard.refusal();
        if (refusal != null)
        {
            LOG.warn("{}", refusal);
        }
        return guard;
    }

    /** Why appends are refused now, naming the broker, the directory and the numbers; null while they are taken. */
    public String refusal()
    {
        refreshIfDue();
        if (noSpace)
        {
            return "broker " + brokerId + ": " + dataDir.toAbsolutePath() + "'s volume is full (a write found no " +
                "space; " + mb(freeBytes) + " free): appends are refused until space is freed";
        }
        if (past)
        {
            return String.format(Locale.ROOT, "broker %d: %.0f%% of %s's volume used, %s free (high watermark " +
                "%.0f%% (%s), free space reserve %s (%s)): appends are refused until space is back (a resume lets " +
                "exporters acknowledge and the log compact)", brokerId, 100 * usedRatio(), dataDir.toAbsolutePath(),
                mb(freeBytes), 100 * watermark.highWatermark(), DiskWatermark.HIGH_WATERMARK_SETTING,
                mb(watermark.freeSpaceReserveBytes()), DiskWatermark.FREE_SPACE_RESERVE_SETTING);
        }
        return null;
    }

    /**
     * Whether the volume has room for what a broker writes besides appends: false from a write that found no space
     * until the volume has room for the headroom again (the watermark plays no part).
     */
    public boolean hasRoom()
    {
        refreshIfDue();
        return !noSpace;
    }

    /** Counts an append refused for disk (for {@code sluice_broker_appends_refused_disk_total}). */
    public void countRefused()
    {
        refused.incrementAndGet();
    }

    public long appendsRefused()
    {
        return refused.get();
    }

    public double usedRatio()
    {
        refreshIfDue();
        return DiskWatermark.usedRatio(totalBytes, freeBytes);
    }

    public long freeBytes()
    {
        refreshIfDue();
        return freeBytes;
    }

    /** How the record logs reserve their segments: zeros, and an append without space waits while the guard frees headroom. */
    public SegmentSpace segmentSpace()
    {
        return new SegmentSpace()
        {
            @Override
            public void reserve(final FileChannel channel, final long from, final long to) throws IOException
            {
                SegmentSpace.zeros(channel, from, to);
            }

            @Override
            public long onNoSpace(final Path file, final IOException cause)
            {
                onFull(file, cause);
                return NO_SPACE_RETRY_MS;
            }

            @Override
            public void onSpaceBack(final Path file)
            {
                LOG.info("broker {}: {} found disk space again", brokerId, file);
            }
        };
    }

    private void onFull(final Path file, final IOException cause)
    {
        if (!noSpace)
        {
            noSpace = true;
            LOG.warn("broker {}: no disk space for {} ({}): refusing appends; releasing {} of headroom so what is " +
                "committed can be written", brokerId, file, cause.getMessage(), headroom);
        }
        releaseHeadroom();
    }

    private synchronized void refreshIfDue()
    {
        if (!refreshedOnce || nanoClock.getAsLong() - refreshedAtNs >= refreshNs)
        {
            refresh();
        }
    }

    /**
     * Reads the volume again (the broker calls it every 250 ms): a volume with almost nothing free counts as full at
     * once, before a write of Raft's own metadata or log finds no space (Ratis then leaves an empty metadata file
     * that stops the broker's next start); a full disk counts as over once the volume has room for the headroom again.
     */
    public synchronized void refresh()
    {
        try
        {
            totalBytes = volume.totalBytes();
            freeBytes = volume.freeBytes();
        }
        catch (final IOException e)
        {
            LOG.warn("broker {}: cannot read the disk space of {}: {}", brokerId, dataDir, e.getMessage());
        }
        refreshedAtNs = nanoClock.getAsLong();
        refreshedOnce = true;
        final boolean wasPast = past;
        past = watermark.isPast(totalBytes, freeBytes);
        final long headroomBytes = headroomBytes();
        if (freeBytes < headroomBytes / 4 && totalBytes > 0)
        {
            onFull(dataDir, new IOException("only " + mb(freeBytes) + " free"));
        }
        else if (freeBytes > 4 * headroomBytes)
        {
            if (noSpace)
            {
                LOG.info("broker {}: {} free on the volume of {} again: appends are taken again", brokerId,
                    mb(freeBytes), dataDir);
                noSpace = false;
            }
            makeHeadroom(headroomBytes);
        }
        if (past != wasPast)
        {
            if (past)
            {
                LOG.warn("{}", refusal());
            }
            else
            {
                LOG.info("broker {}: {} free on the volume of {}, below the disk watermark: appends are taken again",
                    brokerId, mb(freeBytes), dataDir);
            }
        }
    }

    /** A sixteenth of the volume, at most {@value #MAX_HEADROOM_BYTES} bytes. */
    long headroomBytes()
    {
        return Math.min(MAX_HEADROOM_BYTES, totalBytes / 16);
    }

    private void makeHeadroom(final long bytes)
    {
        try
        {
            if (bytes <= 0 || (Files.exists(headroom) && Files.size(headroom) == bytes))
            {
                return;
            }
            try (FileChannel channel = FileChannel.open(headroom, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING))
            {
                SegmentSpace.zeros(channel, 0, bytes);
                channel.force(true);
            }
        }
        catch (final IOException e)
        {
            releaseHeadroom();
        }
    }

    private void releaseHeadroom()
    {
        try
        {
            Files.deleteIfExists(headroom);
        }
        catch (final IOException e)
        {
            LOG.warn("broker {}: cannot delete {}: {}", brokerId, headroom, e.getMessage());
        }
    }

    private static String mb(final long bytes)
    {
        return bytes >= 10L * 1024 * 1024 ? (bytes >> 20) + " MiB" : bytes >= 10L * 1024 ? (bytes >> 10) + " KiB" :
            bytes + " bytes";
    }
}
