package io.sluice.broker.log;

import org.agrona.BitUtil;
import org.agrona.DirectBuffer;
import org.agrona.IoUtil;
import org.agrona.collections.IntArrayList;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * The committed records of one partition replica, readable by position.
 * <p>
 * On-disk layout, under the partition's Raft state machine directory ({@code <group>/sm/records/}):
 * <pre>
 *   segment-&lt;first position, 20 digits&gt;.log   sealed segments, then the one active segment (the last)
 * </pre>
 * A segment is a sequence of {@link RecordFrame}s (the layout is stated and read and written there), positions
 * dense and increasing.
 * <p>
 * Writes go straight into the active segment's memory mapping: a record's body is copied once, from the
 * caller's buffer (a view of the applied Raft entry) into the segment's pages, where a {@code write(2)} would
 * have copied it from a buffer of ours; there is no write buffer. The mapping runs ahead of the records (the file
 * is extended as it grows, doubling up to steps of {@link #MAX_GROWTH_BYTES}) and the file is cut to its records when
 * the segment is sealed or closed. Every byte is reserved on disk ({@link SegmentSpace#reserve}) before it is mapped:
 * a page of a sparse mapping that a full disk cannot back would raise SIGBUS, which can kill the JVM; a failed
 * reservation is an IOException before anything is written, and the append waits or fails as the
 * {@link SegmentSpace} says, counting nothing.
 * Records become readable at {@link #flushWrites()}, which the apply calls once per entry, and are forced to disk
 * by {@link #flush()} (before a snapshot lets Raft purge the entries the records came from). A torn, corrupt or
 * zero tail of the active segment (a crash while it ran ahead) is cut off on open, since the Raft log still holds
 * those entries and applies them again.
 * A snapshot seals the active segment ({@link #roll()}) so the segments it lists never change; compaction
 * only ever deletes whole sealed segments below a floor position.
 * <p>
 * Thread-safety: appends, rolls and compaction come from the state machine's apply thread; reads from
 * exporter threads. Every method is synchronized; reads copy into the caller's buffer, through the file channel
 * (which sees what the mapping wrote: one page cache), so no reader touches a mapping that a roll unmaps.
 * <p>
 * Why about 750 lines: it is the one owner of the segment files and of the lock every read and write takes; its
 * frames' layout is {@link RecordFrame}'s and the space reservation {@link SegmentSpace}'s, and what is left (open and
 * scan, append, read, roll, compact, flush) shares the segments' state under that one monitor.
 */
public final class RecordLog implements AutoCloseable
{
    public static final String DIRECTORY = "records";
    static final String SEGMENT_PREFIX = "segment-";
    static final String SEGMENT_SUFFIX = ".log";

    static final int MAX_FRAME_LENGTH = 32 * 1024 * 1024;
    /** The first mapping of an active segment; it doubles as records need, up to the segment size and a slack. */
    static final int MIN_MAPPING_BYTES = 256 * 1024;
    static final int MAPPING_SLACK_BYTES = 64 * 1024;
    /** Most a mapping grows by at once: what one reservation writes (and what a full disk refuses) stays small. */
    static final int MAX_GROWTH_BYTES = 4 * 1024 * 1024;

    private final Path directory;
    private final long segmentSizeBytes;
    private final SegmentSpace space;
    private boolean closed;
    private final List<Segment> segments = new ArrayList<>();
    private final CRC32C crc = new CRC32C();
    private final RecordFrame frame = new RecordFrame();
    private final IntArrayList pendingLengths = new IntArrayList();
    private int pendingBytes;
    private long pendingRaftIndex;
    private long lastPosition;
    private long flushedPosition;
    private long lastRaftIndex;

    private RecordLog(final Path directory, final long segmentSizeBytes, final SegmentSpace space)
    {
        this.directory = directory;
        this.segmentSizeBytes = segmentSizeBytes;
        this.space = space;
    }

    /** Opens the log with {@link SegmentSpace#zerosFailingFast()}; as {@link #open(Path, long, long, long, SegmentSpace)}. */
    public static RecordLog open(
        final Path directory,
        final long segmentSizeBytes,
        final long snapshotLastPosition,
        final long snapshotLastRaftIndex) throws IOException
    {
        return open(directory, segmentSizeBytes, snapshotLastPosition, snapshotLastRaftIndex,
            SegmentSpace.zerosFailingFast());
    }

    /**
     * Opens (or creates) the log in a directory.
     *
     * @param snapshotLastPosition  last position recorded by the snapshot the state machine starts from, 0 if none.
     * @param snapshotLastRaftIndex Raft index of the entry holding that position, 0 if none.
     * @param space                 reserves the segments' space on disk, and says what an append does without it.
     */
    public static RecordLog open(
        final Path directory,
        final long segmentSizeBytes,
        final long snapshotLastPosition,
        final long snapshotLastRaftIndex,
        final SegmentSpace space) throws IOException
    {
        Files.createDirectories(directory);
        final RecordLog log = new RecordLog(directory, segmentSizeBytes, space);
        log.recover(snapshotLastPosition, snapshotLastRaftIndex);
        return log;
    }

    private void recover(final long snapshotLastPosition, final long snapshotLastRaftIndex) throws IOException
    {
        final List<Path> files;
        try (Stream<Path> listing = Files.list(directory))
        {
            files = listing
                .filter((p) -> p.getFileName().toString().startsWith(SEGMENT_PREFIX) &&
                    p.getFileName().toString().endsWith(SEGMENT_SUFFIX))
                .sorted()
                .toList();
        }
        lastPosition = snapshotLastPosition;
        lastRaftIndex = snapshotLastRaftIndex;
        for (int i = 0; i < files.size(); i++)
        {
            final Path file = files.get(i);
            final String name = file.getFileName().toString();
            final long firstPosition = Long.parseLong(
                name.substring(SEGMENT_PREFIX.length(), name.length() - SEGMENT_SUFFIX.length()));
            final boolean active = i == files.size() - 1;
            final Segment segment = Segment.open(file, firstPosition, active);
            segment.scan(active, crc);
            segments.add(segment);
            if (segment.count() > 0)
            {
                lastPosition = Math.max(lastPosition, segment.lastPosition());
                lastRaftIndex = Math.max(lastRaftIndex, segment.lastRaftIndex);
            }
            else
            {
                lastPosition = Math.max(lastPosition, firstPosition - 1);
            }
        }
        if (segments.isEmpty())
        {
            segments.add(Segment.create(directory, lastPosition + 1));
        }
        flushedPosition = lastPosition;
    }

    public synchronized long lastPosition()
    {
        return lastPosition;
    }

    /** Raft index of the entry that carried the last record: entries at or below it are already here. */
    public synchronized long lastRaftIndex()
    {
        return lastRaftIndex;
    }

    /**
     * Lowest position still held, or {@code lastPosition() + 1} when the log holds none. Records appended but not yet
     * flushed are held (their segment counts them only at {@link #flushWrites()}): the active segment's first
     * position then, not past them, or an exporter asking between the two would take them for compacted.
     */
    public synchronized long firstPosition()
    {
        for (final Segment segment : segments)
        {
            if (segment.count() > 0)
            {
                return segment.firstPosition;
            }
        }
        return segments.isEmpty() ? lastPosition + 1 : segments.get(segments.size() - 1).firstPosition;
    }

    /**
     * Appends the next record, whose body lies in {@code body} as the append batch carried it: a RecordBody of
     * broker-log-codecs.xml, {@code length} bytes from {@code offset}, encoded with {@code bodyBlockLength} and
     * {@code bodyVersion}. The body is copied once, into the active segment; its position is {@link #lastPosition()}
     * + 1. Readers see it after {@link #flushWrites()}, which the caller calls after an entry.
     */
    public synchronized long append(
        final long raftIndex,
        final DirectBuffer body,
        final int offset,
        final int length,
        final int bodyBlockLength,
        final int bodyVersion) throws IOException
    {
        final long position = lastPosition + 1;
        final RecordFrame frame = claim(RecordFrame.frameLengthOfBody(length));
        try
        {
            frame.putRecord(raftIndex, position, body, offset, length, bodyBlockLength, bodyVersion).crc(crc);
        }
        catch (final InternalError e)
        {
            throw mappedWriteFailed(e);
        }
        return appended(raftIndex);
    }

    /**
     * Appends the next record from its timestamp, key and payload, encoding its body into the active segment;
     * otherwise as {@link #append(long, DirectBuffer, int, int, int, int)}.
     *
     * @param key null or empty for a record without a key.
     */
    public synchronized long append(
        final long raftIndex,
        final long timestamp,
        final DirectBuffer key,
        final int keyOffset,
        final int keyLength,
        final DirectBuffer payload,
        final int payloadOffset,
        final int payloadLength) throws IOException
    {
        final int frameKeyLength = key == null || keyLength <= 0 ? RecordFrame.NO_KEY : keyLength;
        final long position = lastPosition + 1;
        final RecordFrame frame = claim(RecordFrame.frameLength(frameKeyLength, payloadLength));
        try
        {
            frame.putRecord(raftIndex, position, timestamp, key, keyOffset, frameKeyLength, payload, payloadOffset,
                payloadLength).crc(crc);
        }
        catch (final InternalError e)
        {
            throw mappedWriteFailed(e);
        }
        return appended(raftIndex);
    }

    /** The frame flyweight over the next {@code frameBytes} of the active segment, rolling it first when full. */
    private RecordFrame claim(final long frameBytes) throws IOException
    {
        if (frameBytes > MAX_FRAME_LENGTH)
        {
            throw new IOException("record of " + frameBytes + " bytes exceeds the maximum " + MAX_FRAME_LENGTH);
        }
        boolean waited = false;
        while (true)
        {
            if (closed)
            {
                throw new IOException("record log " + directory + " is closed");
            }
            Segment active = segments.get(segments.size() - 1);
            if (active.size + pendingBytes >= segmentSizeBytes && active.count() + pendingLengths.size() > 0)
            {
                flushWrites();
                active = rollLocked();
            }
            final long frameOffset = active.size + pendingBytes;
            try
            {
                final UnsafeBuffer writable = active.writable(frameOffset + frameBytes, segmentSizeBytes, space);
                if (waited)
                {
                    space.onSpaceBack(active.file);
                }
                return frame.wrap(writable, (int)frameOffset);
            }
            catch (final NoSpaceException e)
            {
                final long waitMs = space.onNoSpace(active.file, e.reason());
                if (waitMs < 0)
                {
                    throw e.reason();
                }
                waited = true;
                awaitSpace(waitMs);
            }
        }
    }

    /** Waits with the log's lock released: exporters read on while an append waits for disk space. */
    private void awaitSpace(final long waitMs) throws IOException
    {
        try
        {
            wait(Math.max(1, waitMs));
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for disk space in " + directory, e);
        }
    }

    /**
     * The JVM reports a fault on a mapped page (the file system could not back it: a full disk) as an
     * {@code InternalError}; the caller gets the {@code IOException} a failed {@code write(2)} gave. The frame is not
     * counted, and the next one overwrites it.
     */
    private IOException mappedWriteFailed(final InternalError e)
    {
        return new IOException("writing into " + segments.get(segments.size() - 1).file + " failed: " + e.getMessage() +
            " (is the disk full?)", e);
    }

    /** Counts the frame just written into the active segment. */
    private long appended(final long raftIndex)
    {
        final int frameLength = frame.frameLength();
        pendingLengths.addInt(frameLength);
        pendingBytes += frameLength;
        pendingRaftIndex = raftIndex;
        return ++lastPosition;
    }

    /** Makes the records appended since the last call readable (they are in the segment's pages already). */
    public synchronized void flushWrites()
    {
        if (pendingLengths.isEmpty())
        {
            return;
        }
        segments.get(segments.size() - 1).published(pendingLengths, pendingRaftIndex);
        lastRaftIndex = pendingRaftIndex;
        flushedPosition = lastPosition;
        pendingLengths.clear();
        pendingBytes = 0;
    }

    /**
     * Copies up to {@code maxCount} records from {@code fromPosition} on and hands each to the reader, in
     * order; returns how many were read. Reading stops at the end of a segment.
     */
    public synchronized int read(final long fromPosition, final int maxCount, final RecordReader reader)
        throws IOException
    {
        if (fromPosition > flushedPosition || maxCount <= 0)
        {
            return 0;
        }
        final Segment segment = segmentOf(fromPosition);
        if (segment == null)
        {
            throw new IOException("position " + fromPosition + " is no longer held (first held is " +
                firstPosition() + ")");
        }
        return segment.read(fromPosition, maxCount, reader);
    }

    /** Forces every segment's data to disk. */
    public synchronized void flush() throws IOException
    {
        flushWrites();
        for (final Segment segment : segments)
        {
            segment.force();
        }
    }

    /** Seals the active segment if it holds records and starts a new one; the sealed ones never change. */
    public synchronized void roll() throws IOException
    {
        flushWrites();
        if (segments.get(segments.size() - 1).count() > 0)
        {
            rollLocked();
        }
    }

    private Segment rollLocked() throws IOException
    {
        final Segment active = segments.get(segments.size() - 1);
        active.force();
        active.seal();
        final Segment next = Segment.create(directory, lastPosition + 1);
        segments.add(next);
        return next;
    }

    /** Deletes sealed segments whose every position is below {@code floorPosition}; returns how many. */
    public synchronized int compact(final long floorPosition) throws IOException
    {
        int deleted = 0;
        while (segments.size() > 1)
        {
            final Segment oldest = segments.get(0);
            if (oldest.count() > 0 && oldest.lastPosition() >= floorPosition)
            {
                break;
            }
            oldest.close();
            Files.deleteIfExists(oldest.file);
            Files.deleteIfExists(oldest.file.resolveSibling(oldest.file.getFileName() + ".md5"));
            segments.remove(0);
            deleted++;
        }
        return deleted;
    }

    /** Files of the sealed segments, oldest first: what a snapshot carries. */
    public synchronized List<Path> sealedSegmentFiles()
    {
        final List<Path> files = new ArrayList<>(segments.size());
        for (int i = 0; i < segments.size() - 1; i++)
        {
            files.add(segments.get(i).file);
        }
        return files;
    }

    public Path directory()
    {
        return directory;
    }

    @Override
    public synchronized void close() throws IOException
    {
        closed = true;
        notifyAll(); // an append waiting for disk space gives up
        flushWrites();
        for (final Segment segment : segments)
        {
            segment.close();
        }
        segments.clear();
    }

    private Segment segmentOf(final long position)
    {
        for (int i = segments.size() - 1; i >= 0; i--)
        {
            final Segment segment = segments.get(i);
            if (position >= segment.firstPosition && position < segment.firstPosition + segment.count())
            {
                return segment;
            }
        }
        return null;
    }

    /** Receives records read from the log; the buffers are valid only during the call. */
    @FunctionalInterface
    public interface RecordReader
    {
        void onRecord(
            long position,
            long timestamp,
            DirectBuffer buffer,
            int keyOffset,
            int keyLength,
            int payloadOffset,
            int payloadLength);
    }

    /** A segment's space could not be reserved: the append may wait for space, unlike on other failures. */
    private static final class NoSpaceException extends IOException
    {
        private static final long serialVersionUID = 1L;

        NoSpaceException(final IOException reason)
        {
            super(reason.getMessage(), reason);
        }

        IOException reason()
        {
            return (IOException)getCause();
        }
    }

    private static final class Segment
    {
        private final Path file;
        private final long firstPosition;
        private final IntArrayList offsets = new IntArrayList();
        private FileChannel channel;
        /** Whether the channel is open for writing: the active segment's, until it is sealed. */
        private boolean writable;
        /** Bytes of the segment's published records; the file runs ahead of them while a mapping is open. */
        private long size;
        private long lastRaftIndex;
        private ByteBuffer readBuffer;
        private final UnsafeBuffer readView = new UnsafeBuffer(0, 0);
        private final RecordFrame frame = new RecordFrame();
        /** The active segment's pages from the file's start, where appends write; null until the first one. */
        private MappedByteBuffer mapping;
        private final UnsafeBuffer mappingView = new UnsafeBuffer(0, 0);

        private Segment(final Path file, final long firstPosition, final FileChannel channel, final boolean writable)
        {
            this.file = file;
            this.firstPosition = firstPosition;
            this.channel = channel;
            this.writable = writable;
        }

        static Segment create(final Path directory, final long firstPosition) throws IOException
        {
            final Path file = directory.resolve(String.format("%s%020d%s", SEGMENT_PREFIX, firstPosition, SEGMENT_SUFFIX));
            final FileChannel channel = FileChannel.open(
                file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            channel.truncate(0);
            return new Segment(file, firstPosition, channel, true);
        }

        static Segment open(final Path file, final long firstPosition, final boolean active) throws IOException
        {
            final FileChannel channel = active ?
                FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE) :
                FileChannel.open(file, StandardOpenOption.READ);
            return new Segment(file, firstPosition, channel, active);
        }

        int count()
        {
            return offsets.size();
        }

        long lastPosition()
        {
            return firstPosition + offsets.size() - 1;
        }

        void scan(final boolean active, final CRC32C crc) throws IOException
        {
            final long fileSize = channel.size();
            ByteBuffer body = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
            final UnsafeBuffer view = new UnsafeBuffer(body);
            final RecordFrame frame = new RecordFrame().wrap(view, 0);
            long offset = 0;
            while (offset + RecordFrame.LENGTH_FIELD_LENGTH <= fileSize)
            {
                body.clear().limit(RecordFrame.LENGTH_FIELD_LENGTH);
                readFully(body, offset);
                final long length = RecordFrame.frameLengthOfField(view.getInt(0, ByteOrder.LITTLE_ENDIAN));
                if (length < RecordFrame.MIN_FRAME_LENGTH || length > MAX_FRAME_LENGTH || offset + length > fileSize)
                {
                    break;
                }
                if (body.capacity() < length)
                {
                    body = ByteBuffer.allocate(BitUtil.findNextPositivePowerOfTwo((int)length)).order(ByteOrder.LITTLE_ENDIAN);
                    view.wrap(body);
                    body.clear().limit(RecordFrame.LENGTH_FIELD_LENGTH);
                    readFully(body, offset);
                }
                body.clear().position(RecordFrame.LENGTH_FIELD_LENGTH).limit((int)length);
                readFully(body, offset + RecordFrame.LENGTH_FIELD_LENGTH);
                if (!frame.crcMatches(crc))
                {
                    break;
                }
                if (frame.version() != RecordFrame.VERSION || !frame.isWellFormed())
                {
                    // Intact, but not a frame this broker can read (another layout: an older broker's, which had no
                    // version field, or a newer one's): stop rather than cut off what another version wrote.
                    throw new IOException("segment " + file + " holds a record frame of version " + frame.version() +
                        " at offset " + offset + " that this broker cannot read (it reads version " +
                        RecordFrame.VERSION + "): written by another version of the broker?");
                }
                if (frame.position() != firstPosition + offsets.size())
                {
                    break;
                }
                lastRaftIndex = frame.raftIndex();
                offsets.addInt((int)offset);
                offset += length;
            }
            if (offset != fileSize)
            {
                if (!active)
                {
                    throw new IOException("sealed segment " + file + " is corrupt at offset " + offset);
                }
                channel.truncate(offset);
            }
            size = offset;
            if (!active)
            {
                seal();
            }
        }

        /**
         * The mapping, made to hold at least {@code end} bytes: it doubles from {@code MIN_MAPPING_BYTES} (by at most
         * {@code MAX_GROWTH_BYTES}) up to the
         * segment size and {@code MAPPING_SLACK_BYTES}, then grows to what a record needs (the segment rolls at its
         * next append).
         */
        UnsafeBuffer writable(final long end, final long segmentSizeBytes, final SegmentSpace space) throws IOException
        {
            if (mapping != null && mapping.capacity() >= end)
            {
                return mappingView;
            }
            if (!writable)
            {
                throw new IOException("segment " + file + " is sealed");
            }
            final long current = mapping == null ? 0 : mapping.capacity();
            final long grown = Math.min(Math.max(current + Math.min(current, MAX_GROWTH_BYTES), MIN_MAPPING_BYTES),
                segmentSizeBytes + MAPPING_SLACK_BYTES);
            final long capacity = Math.max(end, grown);
            if (capacity > Integer.MAX_VALUE)
            {
                throw new IOException("segment " + file + " would exceed " + Integer.MAX_VALUE + " bytes");
            }
            // Reserves the file up to the capacity on disk before mapping it (the old mapping stays whole if this
            // fails); the part past the records is cut off when the segment is sealed or closed, and on open after a
            // crash (a zero length ends the scan).
            final long fileSize = channel.size();
            if (fileSize < capacity)
            {
                try
                {
                    space.reserve(channel, fileSize, capacity);
                }
                catch (final IOException e)
                {
                    throw new NoSpaceException(new IOException("reserving " + (capacity - fileSize) + " bytes of " +
                        file + " failed: " + e.getMessage(), e));
                }
            }
            unmap();
            mapping = channel.map(FileChannel.MapMode.READ_WRITE, 0, capacity);
            mappingView.wrap(mapping);
            return mappingView;
        }

        /** Counts the records written into the mapping since the last call: readers see them from now on. */
        void published(final IntArrayList frameLengths, final long raftIndex)
        {
            int offset = (int)size;
            for (int i = 0; i < frameLengths.size(); i++)
            {
                offsets.addInt(offset);
                offset += frameLengths.getInt(i);
            }
            size = offset;
            lastRaftIndex = raftIndex;
        }

        int read(final long fromPosition, final int maxCount, final RecordReader reader) throws IOException
        {
            final int first = (int)(fromPosition - firstPosition);
            final int last = Math.min(offsets.size(), first + maxCount);
            final long start = offsets.getInt(first);
            final long end = last < offsets.size() ? offsets.getInt(last) : size;
            final int bytes = (int)Math.min(end - start, Integer.MAX_VALUE);
            if (readBuffer == null || readBuffer.capacity() < bytes)
            {
                readBuffer = ByteBuffer.allocateDirect(BitUtil.findNextPositivePowerOfTwo(Math.max(bytes, 64 * 1024)))
                    .order(ByteOrder.LITTLE_ENDIAN);
            }
            readBuffer.clear().limit(bytes);
            readFully(readBuffer, start);
            readView.wrap(readBuffer, 0, bytes);
            int cursor = 0;
            int count = 0;
            for (int i = first; i < last; i++)
            {
                frame.wrap(readView, cursor);
                reader.onRecord(frame.position(), frame.timestamp(), readView, frame.keyOffset(), frame.keyLength(),
                    frame.payloadOffset(), frame.payloadLength());
                cursor += frame.frameLength();
                count++;
            }
            return count;
        }

        void force() throws IOException
        {
            if (mapping != null)
            {
                mapping.force();
            }
            if (channel.isOpen())
            {
                channel.force(false);
            }
        }

        void seal() throws IOException
        {
            if (writable)
            {
                cutToRecords();
                // The cut is durable before the next segment exists: on open only the last segment may run ahead.
                channel.force(true);
            }
            // Reopen read-only: a sealed segment never changes, and a snapshot may be sending it.
            channel.close();
            channel = FileChannel.open(file, StandardOpenOption.READ);
            writable = false;
        }

        void close() throws IOException
        {
            try
            {
                if (writable)
                {
                    cutToRecords();
                }
            }
            finally
            {
                channel.close();
            }
        }

        /** Unmaps the active segment and cuts the file the mapping extended back to the published records. */
        private void cutToRecords() throws IOException
        {
            unmap();
            if (channel.size() != size)
            {
                channel.truncate(size);
            }
        }

        private void unmap()
        {
            if (mapping != null)
            {
                mappingView.wrap(0, 0);
                IoUtil.unmap(mapping);
                mapping = null;
            }
        }

        private void readFully(final ByteBuffer buffer, final long offset) throws IOException
        {
            long at = offset;
            while (buffer.hasRemaining())
            {
                final int read = channel.read(buffer, at);
                if (read < 0)
                {
                    throw new IOException("unexpected end of " + file + " at " + at);
                }
                at += read;
            }
        }
    }
}
