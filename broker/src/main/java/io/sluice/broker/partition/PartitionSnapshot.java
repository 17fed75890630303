package io.sluice.broker.partition;

import io.sluice.broker.backfill.BackfillMessages;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.broker.log.codecs.PartitionSnapshotDecoder;
import io.sluice.broker.log.codecs.PartitionSnapshotEncoder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
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
 * Immutable; exporters are kept in id order, so equal states encode to equal bytes.
 */
public record PartitionSnapshot(
    long lastPosition,
    long lastRecordRaftIndex,
    Map<String, Long> exporterPositions,
    byte[] backfills,
    byte[] idempotency,
    Map<String, UnavailableRange> unavailable)
{
    /**
     * The oldest schema version of a partition snapshot this version reads: 4, the layout-4 start (DataLayout refuses
     * older directories); later versions only add control group fields, so their partition snapshots read the same.
     */
    static final int OLDEST_READABLE_VERSION = 4;

    /** The {@code backfills} of a snapshot without backfill tasks. */
    public static final byte[] NO_BACKFILLS = new byte[0];

    public PartitionSnapshot
    {
        exporterPositions = Collections.unmodifiableMap(new TreeMap<>(exporterPositions));
        unavailable = Collections.unmodifiableMap(new TreeMap<>(unavailable));
        backfills = backfills.clone();
        idempotency = idempotency.clone();
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

    @Override
    public byte[] backfills()
    {
        return backfills.clone();
    }

    @Override
    public byte[] idempotency()
    {
        return idempotency.clone();
    }

    /** The snapshot file's content. */
    public byte[] encode()
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        final PartitionSnapshotEncoder encoder = new PartitionSnapshotEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .lastPosition(lastPosition)
            .lastRecordRaftIndex(lastRecordRaftIndex);
        final PartitionSnapshotEncoder.ExportersEncoder exporters = encoder.exportersCount(exporterPositions.size());
        exporterPositions.forEach((id, position) ->
        {
            final UnavailableRange range = unavailable.get(id);
            exporters.next().position(position)
                .unavailableFrom(range == null ? 0 : range.fromPosition())
                .unavailableTo(range == null ? 0 : range.toPosition())
                .exporterId(id);
        });
        encoder.putIdempotency(idempotency, 0, idempotency.length);
        encoder.putBackfillTasks(backfills, 0, backfills.length);
        return Arrays.copyOf(buffer.byteArray(), MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    /**
     * Reads a snapshot file's content.
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
            final byte[] idempotency = section(decoder.idempotencyLength(), length - decoder.limit() -
                PartitionSnapshotDecoder.idempotencyHeaderLength(), source, "append ids");
            decoder.getIdempotency(idempotency, 0, idempotency.length);
            final byte[] backfills = section(decoder.backfillTasksLength(), length - decoder.limit() -
                PartitionSnapshotDecoder.backfillTasksHeaderLength(), source, "backfill tasks");
            decoder.getBackfillTasks(backfills, 0, backfills.length);
            return new PartitionSnapshot(lastPosition, lastRecordRaftIndex, positions, backfills, idempotency, unavailable);
        }
        catch (final IndexOutOfBoundsException e)
        {
            throw new IOException(source + " is a partition snapshot cut short at " + length + " bytes", e);
        }
    }

    /** A section's bytes, once its length is known to fit in what is left: a corrupt length allocates nothing. */
    private static byte[] section(final int declared, final int left, final String source, final String what)
        throws IOException
    {
        if (declared < 0 || declared > left)
        {
            throw new IOException(source + " is a partition snapshot whose " + what + " claim " +
                Integer.toUnsignedString(declared) + " bytes where " + Math.max(0, left) + " are left");
        }
        return new byte[declared];
    }

    /** Writes the file whole or not at all ({@link SnapshotFile}). */
    public void writeTo(final Path file) throws IOException
    {
        SnapshotFile.write(file, encode());
    }

    public static PartitionSnapshot readFrom(final Path file) throws IOException
    {
        final byte[] bytes = Files.readAllBytes(file);
        return decode(new UnsafeBuffer(bytes), 0, bytes.length, file.toString());
    }

    @Override
    public boolean equals(final Object other)
    {
        return other instanceof PartitionSnapshot that &&
            lastPosition == that.lastPosition &&
            lastRecordRaftIndex == that.lastRecordRaftIndex &&
            exporterPositions.equals(that.exporterPositions) &&
            unavailable.equals(that.unavailable) &&
            Arrays.equals(backfills, that.backfills) &&
            Arrays.equals(idempotency, that.idempotency);
    }

    @Override
    public int hashCode()
    {
        return Objects.hash(lastPosition, lastRecordRaftIndex, exporterPositions, unavailable,
            Arrays.hashCode(backfills), Arrays.hashCode(idempotency));
    }

    @Override
    public String toString()
    {
        return "PartitionSnapshot[lastPosition=" + lastPosition + ", lastRecordRaftIndex=" + lastRecordRaftIndex +
            ", exporterPositions=" + exporterPositions + ", unavailable=" + unavailable + ", backfills=" + backfills.length + " bytes, idempotency=" +
            idempotency.length + " bytes]";
    }
}
