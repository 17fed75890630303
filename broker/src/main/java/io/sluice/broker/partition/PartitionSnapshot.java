package io.sluice.broker.partition;

import io.sluice.broker.raft.SnapshotFile;
import io.sluice.broker.exporting.UnavailableRange;
import io.sluice.broker.append.AppendIdempotency;
import io.sluice.broker.backfill.BackfillMessages;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.broker.log.codecs.PartitionSnapshotDecoder;
import io.sluice.broker.log.codecs.PartitionSnapshotEncoder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What a partition's snapshot file holds besides the records: one {@code PartitionSnapshot} message of the
 * broker log schema. The records stay in the record log's sealed segments, which the snapshot lists
 * ({@link PartitionSnapshotStore}); {@code lastPosition} and {@code lastRecordRaftIndex} say where they end.
 * {@code backfills} is the backfill registry's own snapshot, a {@code BackfillTasks} message
 * ({@link BackfillMessages}; empty when there is none), {@code idempotency} the remembered append ids'
 * ({@link AppendIdempotency}, empty when there is none). The exporting state is not here: it is the control
 * group's (issue 15).
 * <p>
 * A snapshot is its encoded message: the two sections (the append ids take up to about 55 MB) are written in place by
 * their owners ({@link #write} with a {@link Section} each) and read as views of the message
 * ({@link #idempotencySection}, {@link #backfillsSection}), so taking or loading one copies neither; the positions are
 * decoded once. Immutable (a decoded snapshot is a view of the caller's bytes, which must not change while it is in
 * use); exporters are kept in id order, so equal states encode to equal bytes.
 */
public final class PartitionSnapshot
{
    /**
     * The oldest schema version of a partition snapshot this version reads: 4, the layout-4 start (DataLayout refuses
     * older directories); later versions only add control group fields, so their partition snapshots read the same.
     */
    static final int OLDEST_READABLE_VERSION = 4;

    /** The {@code backfills} of a snapshot without backfill tasks. */
    public static final byte[] NO_BACKFILLS = new byte[0];

    /** The largest section the schema's length fields allow ({@code maxValue} of the sections' encodings). */
    private static final int MAX_SECTION_BYTES = 128 * 1024 * 1024;

    /** A section of the snapshot that its owner writes in place: it knows its length first. */
    public interface Section
    {
        int length();

        /** Writes exactly {@link #length()} bytes at {@code offset}. */
        void writeTo(MutableDirectBuffer buffer, int offset);

        /** A section of bytes held elsewhere (copied once, into the snapshot). */
        static Section of(final DirectBuffer bytes, final int offset, final int length)
        {
            return new Section()
            {
                @Override
                public int length()
                {
                    return length;
                }

                @Override
                public void writeTo(final MutableDirectBuffer buffer, final int at)
                {
                    buffer.putBytes(at, bytes, offset, length);
                }
            };
        }

        static Section of(final byte[] bytes)
        {
            return of(new UnsafeBuffer(bytes), 0, bytes.length);
        }
    }

    private final DirectBuffer message;
    private final long lastPosition;
    private final long lastRecordRaftIndex;
    private final Map<String, Long> exporterPositions;
    private final Map<String, UnavailableRange> unavailable;
    private final DirectBuffer idempotency;
    private final DirectBuffer backfills;

    private PartitionSnapshot(
        final DirectBuffer message,
        final long lastPosition,
        final long lastRecordRaftIndex,
        final Map<String, Long> exporterPositions,
        final Map<String, UnavailableRange> unavailable,
        final DirectBuffer idempotency,
        final DirectBuffer backfills)
    {
        this.message = message;
        this.lastPosition = lastPosition;
        this.lastRecordRaftIndex = lastRecordRaftIndex;
        this.exporterPositions = Collections.unmodifiableMap(exporterPositions);
        this.unavailable = Collections.unmodifiableMap(unavailable);
        this.idempotency = idempotency;
        this.backfills = backfills;
    }

    /** A snapshot of these values, encoded now (the sections are copied once, into it). */
    public PartitionSnapshot(
        final long lastPosition,
        final long lastRecordRaftIndex,
        final Map<String, Long> exporterPositions,
        final byte[] backfills,
        final byte[] idempotency,
        final Map<String, UnavailableRange> unavailable)
    {
        this(write(lastPosition, lastRecordRaftIndex, exporterPositions, unavailable, Section.of(idempotency),
            Section.of(backfills)));
    }

    /** A snapshot in which no exporter has a range it can never export. */
    public PartitionSnapshot(
        final long lastPosition,
        final long lastRecordRaftIndex,
        final Map<String, Long> exporterPositions,
        final byte[] backfills,
        final byte[] idempotency)
    {
        this(lastPosition, lastRecordRaftIndex, exporterPositions, backfills, idempotency, Map.of());
    }

    private PartitionSnapshot(final PartitionSnapshot written)
    {
        this(written.message, written.lastPosition, written.lastRecordRaftIndex, written.exporterPositions,
            written.unavailable, written.idempotency, written.backfills);
    }

    /**
     * Encodes a snapshot into one array of exactly its length, the sections written in place by their owners: the
     * small part is encoded twice (once to learn its length), the sections once.
     */
    public static PartitionSnapshot write(
        final long lastPosition,
        final long lastRecordRaftIndex,
        final Map<String, Long> exporterPositions,
        final Map<String, UnavailableRange> unavailable,
        final Section idempotency,
        final Section backfills)
    {
        final Map<String, Long> positions = new TreeMap<>(exporterPositions);
        final Map<String, UnavailableRange> ranges = new TreeMap<>(unavailable);
        final int frontLength =
            encodeFront(new ExpandableArrayBuffer(256), lastPosition, lastRecordRaftIndex, positions, ranges).limit();
        final long length = (long)frontLength +
            PartitionSnapshotEncoder.idempotencyHeaderLength() + idempotency.length() +
            PartitionSnapshotEncoder.backfillTasksHeaderLength() + backfills.length();
        if (idempotency.length() > MAX_SECTION_BYTES || backfills.length() > MAX_SECTION_BYTES)
        {
            throw new IllegalStateException("a partition snapshot section holds at most " + MAX_SECTION_BYTES +
                " bytes: append ids " + idempotency.length() + ", backfill tasks " + backfills.length());
        }
        final UnsafeBuffer message = new UnsafeBuffer(new byte[(int)length]);
        final PartitionSnapshotEncoder encoder =
            encodeFront(message, lastPosition, lastRecordRaftIndex, positions, ranges);
        final int idsAt = reserve(encoder, message, PartitionSnapshotEncoder.idempotencyHeaderLength(),
            idempotency.length());
        idempotency.writeTo(message, idsAt);
        final int backfillsAt = reserve(encoder, message, PartitionSnapshotEncoder.backfillTasksHeaderLength(),
            backfills.length());
        backfills.writeTo(message, backfillsAt);
        return new PartitionSnapshot(message, lastPosition, lastRecordRaftIndex, positions, ranges,
            new UnsafeBuffer(message, idsAt, idempotency.length()),
            new UnsafeBuffer(message, backfillsAt, backfills.length()));
    }

    /** The header, the block and the exporters; the encoder's limit is where the sections start. */
    private static PartitionSnapshotEncoder encodeFront(
        final MutableDirectBuffer buffer,
        final long lastPosition,
        final long lastRecordRaftIndex,
        final Map<String, Long> positions,
        final Map<String, UnavailableRange> unavailable)
    {
        final PartitionSnapshotEncoder encoder = new PartitionSnapshotEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .lastPosition(lastPosition)
            .lastRecordRaftIndex(lastRecordRaftIndex);
        final PartitionSnapshotEncoder.ExportersEncoder exporters = encoder.exportersCount(positions.size());
        positions.forEach((id, position) ->
        {
            final UnavailableRange range = unavailable.get(id);
            exporters.next().position(position)
                .unavailableFrom(range == null ? 0 : range.fromPosition())
                .unavailableTo(range == null ? 0 : range.toPosition())
                .exporterId(id);
        });
        return encoder;
    }

    /**
     * Reserves a variable-length field of {@code length} bytes at the encoder's limit, as the generated {@code put}
     * writes one (its length as a little-endian uint32 of {@code headerLength} bytes, then the bytes), and returns
     * where the bytes go, so their owner writes them there instead of into an array the encoder would copy.
     */
    private static int reserve(
        final PartitionSnapshotEncoder encoder, final MutableDirectBuffer buffer, final int headerLength, final int length)
    {
        if (headerLength != Integer.BYTES)
        {
            throw new IllegalStateException("the schema's section length is " + headerLength + " bytes, not a uint32");
        }
        final int limit = encoder.limit();
        buffer.putInt(limit, length, PartitionSnapshotEncoder.BYTE_ORDER);
        encoder.limit(limit + headerLength + length);
        return limit + headerLength;
    }

    public long lastPosition()
    {
        return lastPosition;
    }

    public long lastRecordRaftIndex()
    {
        return lastRecordRaftIndex;
    }

    /** Each exporter's acknowledged position, in id order. */
    public Map<String, Long> exporterPositions()
    {
        return exporterPositions;
    }

    /** The exporters' ranges they can never export, in id order. */
    public Map<String, UnavailableRange> unavailable()
    {
        return unavailable;
    }

    /** The remembered append ids' section ({@link AppendIdempotency#read}): a view of the message, empty for none. */
    public DirectBuffer idempotencySection()
    {
        return idempotency;
    }

    /** The backfill tasks' section ({@link BackfillMessages}): a view of the message, empty for none. */
    public DirectBuffer backfillsSection()
    {
        return backfills;
    }

    /** A copy of the backfill tasks' section, for a reader that wants its own array. */
    public byte[] backfills()
    {
        return copy(backfills);
    }

    /** A copy of the append ids' section, for a reader that wants its own array. */
    public byte[] idempotency()
    {
        return copy(idempotency);
    }

    /** A copy of the snapshot file's content. */
    public byte[] encode()
    {
        return copy(message);
    }

    private static byte[] copy(final DirectBuffer buffer)
    {
        final byte[] bytes = new byte[buffer.capacity()];
        buffer.getBytes(0, bytes);
        return bytes;
    }

    /**
     * Reads a snapshot file's content: the positions are decoded, the sections are views of {@code buffer}.
     *
     * @throws IOException when the bytes are not a partition snapshot of this schema version (an earlier broker's
     *                     snapshots are not read: the broker refuses their data directory first); {@code source}
     *                     names them in the message.
     */
    public static PartitionSnapshot decode(final DirectBuffer buffer, final int offset, final int length, final String source)
        throws IOException
    {
        if (length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            throw new IOException(source + " is not a partition snapshot: " + length + " bytes");
        }
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, offset);
        if (header.schemaId() != PartitionSnapshotDecoder.SCHEMA_ID ||
            header.templateId() != PartitionSnapshotDecoder.TEMPLATE_ID)
        {
            throw new IOException(source + " is not a partition snapshot");
        }
        if (header.version() < OLDEST_READABLE_VERSION)
        {
            throw new IOException(source + " is a partition snapshot of schema version " + header.version() +
                ", written by an earlier Sluice version; this one reads versions " + OLDEST_READABLE_VERSION + " to " +
                PartitionSnapshotDecoder.SCHEMA_VERSION);
        }
        // A view of exactly the given bytes: a length that lies reads past it and fails instead of reading beyond.
        final UnsafeBuffer bytes = new UnsafeBuffer(buffer, offset, length);
        try
        {
            final PartitionSnapshotDecoder decoder = new PartitionSnapshotDecoder()
                .wrap(bytes, header.encodedLength(), header.blockLength(), header.version());
            final long lastPosition = decoder.lastPosition();
            final long lastRecordRaftIndex = decoder.lastRecordRaftIndex();
            final Map<String, Long> positions = new TreeMap<>();
            final Map<String, UnavailableRange> unavailable = new TreeMap<>();
            for (final PartitionSnapshotDecoder.ExportersDecoder exporter : decoder.exporters())
            {
                final long position = exporter.position();
                final UnavailableRange range = UnavailableRange.ofEncoded(exporter.unavailableFrom(), exporter.unavailableTo());
                final String id = exporter.exporterId();
                positions.put(id, position);
                if (range != null)
                {
                    unavailable.put(id, range);
                }
            }
            checkSection(decoder.idempotencyLength(), length - decoder.limit() -
                PartitionSnapshotDecoder.idempotencyHeaderLength(), source, "append ids");
            final UnsafeBuffer idempotency = new UnsafeBuffer(0, 0);
            decoder.wrapIdempotency(idempotency);
            checkSection(decoder.backfillTasksLength(), length - decoder.limit() -
                PartitionSnapshotDecoder.backfillTasksHeaderLength(), source, "backfill tasks");
            final UnsafeBuffer backfills = new UnsafeBuffer(0, 0);
            decoder.wrapBackfillTasks(backfills);
            return new PartitionSnapshot(bytes, lastPosition, lastRecordRaftIndex, positions, unavailable, idempotency,
                backfills);
        }
        catch (final IndexOutOfBoundsException e)
        {
            throw new IOException(source + " is a partition snapshot cut short at " + length + " bytes", e);
        }
    }

    /** Refuses a section whose length is more than is left: a corrupt length reads nothing beyond the bytes. */
    private static void checkSection(final int declared, final int left, final String source, final String what)
        throws IOException
    {
        if (declared < 0 || declared > left)
        {
            throw new IOException(source + " is a partition snapshot whose " + what + " claim " +
                Integer.toUnsignedString(declared) + " bytes where " + Math.max(0, left) + " are left");
        }
    }

    /** Writes the file whole or not at all ({@link SnapshotFile}), straight from the encoded message. */
    public void writeTo(final Path file) throws IOException
    {
        final byte[] array = message.byteArray();
        SnapshotFile.write(file, array != null ?
            ByteBuffer.wrap(array, (int)message.wrapAdjustment(), message.capacity()) : ByteBuffer.wrap(encode()));
    }

    /** Reads a snapshot file; its sections are views of the one array the file is read into. */
    public static PartitionSnapshot readFrom(final Path file) throws IOException
    {
        final byte[] bytes = Files.readAllBytes(file);
        return decode(new UnsafeBuffer(bytes), 0, bytes.length, file.toString());
    }

    @Override
    public boolean equals(final Object other)
    {
        // By content: a snapshot read back from an older schema version equals the one written now.
        return other instanceof PartitionSnapshot that &&
            lastPosition == that.lastPosition &&
            lastRecordRaftIndex == that.lastRecordRaftIndex &&
            exporterPositions.equals(that.exporterPositions) &&
            unavailable.equals(that.unavailable) &&
            backfills.equals(that.backfills) &&
            idempotency.equals(that.idempotency);
    }

    @Override
    public int hashCode()
    {
        return Objects.hash(lastPosition, lastRecordRaftIndex, exporterPositions, unavailable, backfills, idempotency);
    }

    @Override
    public String toString()
    {
        return "PartitionSnapshot[lastPosition=" + lastPosition + ", lastRecordRaftIndex=" + lastRecordRaftIndex +
            ", exporterPositions=" + exporterPositions + ", unavailable=" + unavailable + ", backfills=" +
            backfills.capacity() + " bytes, idempotency=" + idempotency.capacity() + " bytes]";
    }
}
