package io.sluice.broker.partition;

import io.sluice.broker.backfill.BackfillCodecException;
import io.sluice.broker.backfill.BackfillMessages;
import io.sluice.broker.backfill.LegacyBackfillLayout;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.broker.log.codecs.PartitionSnapshotDecoder;
import io.sluice.broker.log.codecs.PartitionSnapshotEncoder;
import io.sluice.protocol.codecs.ExportingState;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
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
 * ({@link AppendIdempotency}, empty when there is none).
 * <p>
 * Immutable; exporters are kept in id order, so equal states encode to equal bytes.
 */
public record PartitionSnapshot(
    long lastPosition,
    long lastRecordRaftIndex,
    ExportingState exportingState,
    long exportingStateVersion,
    Map<String, Long> exporterPositions,
    byte[] backfills,
    byte[] idempotency)
{
    /** The {@code backfills} of a snapshot without backfill tasks. */
    public static final byte[] NO_BACKFILLS = new byte[0];

    public PartitionSnapshot
    {
        Objects.requireNonNull(exportingState, "exportingState");
        exporterPositions = Collections.unmodifiableMap(new TreeMap<>(exporterPositions));
        backfills = backfills.clone();
        idempotency = idempotency.clone();
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
            .lastRecordRaftIndex(lastRecordRaftIndex)
            .exportingState(PartitionState.toCode(exportingState))
            .exportingStateVersion(exportingStateVersion);
        final PartitionSnapshotEncoder.ExportersEncoder exporters = encoder.exportersCount(exporterPositions.size());
        exporterPositions.forEach((id, position) -> exporters.next().position(position).exporterId(id));
        encoder.putBackfills(NO_BACKFILLS, 0, 0); // the field before version 3, kept empty
        encoder.putIdempotency(idempotency, 0, idempotency.length);
        encoder.putBackfillTasks(backfills, 0, backfills.length);
        return Arrays.copyOf(buffer.byteArray(), MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    /**
     * Reads a snapshot file's content; versions before the backfills (1) and idempotency (2) fields read them
     * as empty. The backfill tasks of versions 1 and 2, in their own layout, are read by {@link LegacyBackfillLayout}
     * and held as a {@code BackfillTasks} message like a version 3 snapshot's.
     *
     * @throws IOException when the bytes are not a partition snapshot; {@code source} names them in the message.
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
        final PartitionSnapshotDecoder decoder = new PartitionSnapshotDecoder()
            .wrap(buffer, offset + header.encodedLength(), header.blockLength(), header.version());
        final long lastPosition = decoder.lastPosition();
        final long lastRecordRaftIndex = decoder.lastRecordRaftIndex();
        final ExportingState state = PartitionState.toExportingState(decoder.exportingState());
        final long version = decoder.exportingStateVersion();
        final Map<String, Long> positions = new TreeMap<>();
        for (final PartitionSnapshotDecoder.ExportersDecoder exporter : decoder.exporters())
        {
            final long position = exporter.position();
            positions.put(exporter.exporterId(), position);
        }
        final byte[] legacyBackfills = new byte[decoder.backfillsLength()];
        decoder.getBackfills(legacyBackfills, 0, legacyBackfills.length);
        final byte[] idempotency = new byte[decoder.idempotencyLength()];
        decoder.getIdempotency(idempotency, 0, idempotency.length);
        byte[] backfills = new byte[decoder.backfillTasksLength()];
        decoder.getBackfillTasks(backfills, 0, backfills.length);
        if (legacyBackfills.length > 0)
        {
            try
            {
                backfills = BackfillMessages.encodeTasks(
                    LegacyBackfillLayout.decodeSnapshot(new UnsafeBuffer(legacyBackfills), 0, legacyBackfills.length));
            }
            catch (final BackfillCodecException e)
            {
                throw new IOException(source + ": unreadable backfill tasks (before version 3): " + e.getMessage(), e);
            }
        }
        return new PartitionSnapshot(lastPosition, lastRecordRaftIndex, state, version, positions, backfills, idempotency);
    }

    /** Writes the file whole or not at all: beside it first, forced to disk, then moved over. */
    public void writeTo(final Path file) throws IOException
    {
        final byte[] bytes = encode();
        final Path tmp = file.resolveSibling(file.getFileName() + ".writing");
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING))
        {
            final ByteBuffer content = ByteBuffer.wrap(bytes);
            while (content.hasRemaining())
            {
                channel.write(content);
            }
            channel.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
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
            exportingState == that.exportingState &&
            exportingStateVersion == that.exportingStateVersion &&
            exporterPositions.equals(that.exporterPositions) &&
            Arrays.equals(backfills, that.backfills) &&
            Arrays.equals(idempotency, that.idempotency);
    }

    @Override
    public int hashCode()
    {
        return Objects.hash(lastPosition, lastRecordRaftIndex, exportingState, exportingStateVersion, exporterPositions,
            Arrays.hashCode(backfills), Arrays.hashCode(idempotency));
    }

    @Override
    public String toString()
    {
        return "PartitionSnapshot[lastPosition=" + lastPosition + ", lastRecordRaftIndex=" + lastRecordRaftIndex +
            ", exportingState=" + exportingState + ", exportingStateVersion=" + exportingStateVersion +
            ", exporterPositions=" + exporterPositions + ", backfills=" + backfills.length + " bytes, idempotency=" +
            idempotency.length + " bytes]";
    }
}
