package io.sluice.broker.partition;

import io.sluice.broker.exporting.ExportedState;
import io.sluice.broker.exporting.ExportGate;
import io.sluice.broker.exporting.ExportingView;
import io.sluice.broker.exporting.UnavailableRange;
import io.sluice.broker.append.AppendEntries;
import io.sluice.broker.append.AppendApplier;
import io.sluice.broker.append.AppendIdempotency;
import io.sluice.broker.append.AppendReplies;
import io.sluice.broker.append.EntryBytes;
import io.sluice.broker.backfill.BackfillCodecException;
import io.sluice.broker.backfill.PartitionBackfills;
import io.sluice.broker.log.RecordLog;
import io.sluice.broker.log.SegmentSpace;
import io.sluice.broker.log.codecs.AppendEntryDecoder;
import io.sluice.broker.log.codecs.BackfillAttemptFailedEntryDecoder;
import io.sluice.broker.log.codecs.BackfillAttemptStartedEntryDecoder;
import io.sluice.broker.log.codecs.BackfillCancelEntryDecoder;
import io.sluice.broker.log.codecs.BackfillCheckpointEntryDecoder;
import io.sluice.broker.log.codecs.BackfillRegisterEntryDecoder;
import io.sluice.broker.log.codecs.ExporterPositionsEntryDecoder;
import io.sluice.broker.log.codecs.IdempotentAppendEntryDecoder;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The replicated state of one partition, without Raft: the record log, the exporters' acknowledged positions,
 * the backfills and the remembered append ids (the exporting state is the cluster control group's, issue 15,
 * and reaches the exporters through {@link ExportingView}). Every replica applies
 * the same committed entries in the same order through {@link #apply}, one dispatch on the entry's template
 * id, so every replica holds the same state. {@link PartitionStateMachine} adapts it to Ratis.
 * <p>
 * Entries are applied again after a restart (those after the last snapshot): an append entry's positions are
 * counted on from the snapshot's last position ({@code appliedPosition}), so the append ids it carried are
 * remembered with the positions they were first given, and only its records at positions the log does not hold
 * are written (by position, not Raft index: a crash can leave an entry half written); the other entries are
 * idempotent.
 * <p>
 * Records reach the log from the entry's own bytes: {@link AppendEntries.Reader} gives each record's body where it
 * lies in the entry (the leader's entry is a rope over the batches the command API encoded), and
 * {@link RecordLog#append(long, DirectBuffer, int, int, int, int)} copies it into the segment, the only copy here.
 * <p>
 * Thread-safety: {@link #apply}, {@link #restore} and the snapshot calls on one thread (Ratis's apply thread);
 * getters are safe from any thread. {@link #exportGate()} is held around every export (director and backfills)
 * and by a pause's answer ({@link ExportingView#awaitExportsStopped}), so once a pause is answered nothing is
 * exported; it is also held while a reset to latest moves an exporter's position.
 * <p>
 * Why a little over 450 lines: it is the replicated state's one apply path (one dispatch on the template id) and its
 * snapshot mirror; the append entries' apply is {@link io.sluice.broker.append.AppendApplier}'s, the backfills'
 * {@link PartitionBackfills}'.
 */
public final class PartitionState implements PartitionBackfills.StateView, ExportedState
{
    /** What the state tells its partition while applying; called on the apply thread: must not block. */
    public interface Listener
    {
        /** Records up to {@code lastPosition} were applied. */
        void onRecordsApplied(int partitionId, long lastPosition);
    }

    /** The reply of an entry that answers nothing. */
    static final byte[] NO_REPLY = AppendReplies.NO_REPLY;

    private static final Logger LOG = LoggerFactory.getLogger(PartitionState.class);

    private final int brokerId;
    private final int partitionId;
    private final Set<String> exporterIds;
    private final long segmentSizeBytes;
    private final Listener listener;
    private final ExportGate exportGate = new ExportGate();
    private final Map<String, Long> exporterPositions = new ConcurrentHashMap<>();
    /** Per exporter, the latest range it moved past because it was compacted away (issue 29). */
    private final Map<String, UnavailableRange> unavailable = new ConcurrentHashMap<>();

    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final ExporterPositionsEntryDecoder positionsDecoder = new ExporterPositionsEntryDecoder();
    private final AppendIdempotency idempotency;
    /** The entry being applied, in the pieces Ratis holds it in; views of it end with the apply. */
    private final EntryBytes entryBytes = new EntryBytes();
    private final AppendApplier appends;
    private final UnsafeBuffer entryView = new UnsafeBuffer(0, 0);
    private final ExpandableArrayBuffer entryScratch = new ExpandableArrayBuffer(0);

    private volatile RecordLog log;
    /** How the record log reserves disk space; set before the state machine starts (the broker's disk guard). */
    private volatile SegmentSpace segmentSpace = SegmentSpace.zerosFailingFast();
    private PartitionBackfills backfills;

    public PartitionState(
        final int brokerId,
        final int partitionId,
        final Set<String> exporterIds,
        final long segmentSizeBytes,
        final Listener listener)
    {
        this(brokerId, partitionId, exporterIds, segmentSizeBytes, listener, new AppendIdempotency());
    }

    PartitionState(
        final int brokerId,
        final int partitionId,
        final Set<String> exporterIds,
        final long segmentSizeBytes,
        final Listener listener,
        final AppendIdempotency idempotency)
    {
        this.brokerId = brokerId;
        this.partitionId = partitionId;
        this.exporterIds = Set.copyOf(exporterIds);
        this.segmentSizeBytes = segmentSizeBytes;
        this.listener = listener;
        this.idempotency = idempotency;
        this.appends = new AppendApplier(brokerId, partitionId, idempotency,
            (lastPosition) -> listener.onRecordsApplied(partitionId, lastPosition));
    }

    /** Wires the partition's backfills in; before the first {@link #restore} (it reads their snapshot). */
    public void backfills(final PartitionBackfills backfills)
    {
        this.backfills = backfills;
    }

    // ------------------------------------------------------------------------------------------- lifecycle

    /**
     * Replaces the whole state with a snapshot's (null: the empty state) and opens the record log in
     * {@code directory}'s {@value RecordLog#DIRECTORY} folder, whose records up to the snapshot's last position
     * must be there. The log held before must be closed ({@link #closeLog}).
     */
    public void restore(final Path directory, final PartitionSnapshot snapshot) throws IOException
    {
        exporterPositions.clear();
        unavailable.clear();
        idempotency.clear();
        long lastPosition = 0;
        long lastRecordRaftIndex = 0;
        DirectBuffer backfillState = new UnsafeBuffer(PartitionSnapshot.NO_BACKFILLS);
        if (snapshot != null)
        {
            lastPosition = snapshot.lastPosition();
            lastRecordRaftIndex = snapshot.lastRecordRaftIndex();
            exporterPositions.putAll(snapshot.exporterPositions());
            unavailable.putAll(snapshot.unavailable());
            // Both sections are read where the snapshot holds them: the append ids take up to about 55 MB.
            backfillState = snapshot.backfillsSection();
            final DirectBuffer ids = snapshot.idempotencySection();
            if (ids.capacity() > 0)
            {
                idempotency.read(ids, 0, ids.capacity());
            }
        }
        if (backfills != null)
        {
            // No backfills in the snapshot (or none at all) reads as none: an installed snapshot replaces any held here.
            backfills.readSnapshot(backfillState, 0, backfillState.capacity());
        }
        log = RecordLog.open(directory.resolve(RecordLog.DIRECTORY), segmentSizeBytes, lastPosition, lastRecordRaftIndex,
            segmentSpace);
        appends.restart(lastPosition);
    }

    /**
     * Prepares the record log for a snapshot: writes it through to disk, seals the active segment (a snapshot
     * lists only sealed ones) and deletes the segments below {@code floorPosition}; returns how many went.
     */
    public int sealAndCompactLog(final long floorPosition) throws IOException
    {
        final RecordLog log = this.log;
        log.flush();
        log.roll();
        return log.compact(floorPosition);
    }

    /** The state as a snapshot holds it; with {@link #restore} it gives back an equal state. */
    public PartitionSnapshot snapshot()
    {
        final RecordLog log = this.log;
        final PartitionSnapshot.Section backfillState;
        if (backfills != null)
        {
            final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
            backfillState = PartitionSnapshot.Section.of(buffer, 0, backfills.writeSnapshot(buffer, 0));
        }
        else
        {
            backfillState = PartitionSnapshot.Section.of(PartitionSnapshot.NO_BACKFILLS);
        }
        // The append ids are written straight into the snapshot's message: no array of their own to copy.
        final int idsLength = idempotency.snapshotLength();
        final PartitionSnapshot.Section ids = new PartitionSnapshot.Section()
        {
            @Override
            public int length()
            {
                return idsLength;
            }

            @Override
            public void writeTo(final MutableDirectBuffer buffer, final int offset)
            {
                final int written = idempotency.write(buffer, offset);
                if (written != idsLength)
                {
                    throw new IllegalStateException("append ids took " + written + " bytes, " + idsLength + " expected");
                }
            }
        };
        return PartitionSnapshot.write(log.lastPosition(), log.lastRaftIndex(), exporterPositions, unavailable, ids,
            backfillState);
    }

    public void closeLog()
    {
        final RecordLog log = this.log;
        if (log != null)
        {
            try
            {
                log.close();
            }
            catch (final IOException e)
            {
                LOG.warn("partition {} on broker {}: failed to close the record log", partitionId, brokerId, e);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------- apply

    /**
     * Applies one committed entry, the one at Raft index {@code index}, whose bytes are the remaining bytes of
     * {@code pieces}, in order (one buffer, or the pieces of a rope as the leader holds the entry it proposed). The
     * buffers are only read, and no view of them outlives this call. Returns the reply for the proposer: an encoded
     * {@code AppendResult} or {@code AppendBatchesResult} ({@link AppendReplies}) for appends, {@link #NO_REPLY} for
     * the rest.
     *
     * @throws IOException when the entry is not one of this schema, or the record log cannot be written.
     */
    public byte[] apply(final long index, final List<ByteBuffer> pieces) throws IOException
    {
        try
        {
            return apply(index, entryBytes.wrap(pieces));
        }
        finally
        {
            releaseEntry();
        }
    }

    /** Applies one committed entry of which {@code buffer} holds exactly the bytes; as {@link #apply(long, List)}. */
    public byte[] apply(final long index, final DirectBuffer buffer) throws IOException
    {
        try
        {
            return apply(index, entryBytes.wrap(buffer));
        }
        finally
        {
            releaseEntry();
        }
    }

    private byte[] apply(final long index, final EntryBytes entry) throws IOException
    {
        headerDecoder.wrap(entry.view(entryView, 0, MessageHeaderDecoder.ENCODED_LENGTH, entryScratch), 0);
        if (headerDecoder.schemaId() != MessageHeaderDecoder.SCHEMA_ID)
        {
            throw new IOException("entry " + index + " has schema " + headerDecoder.schemaId());
        }
        final int offset = headerDecoder.encodedLength();
        final int blockLength = headerDecoder.blockLength();
        final int version = headerDecoder.version();
        final int templateId = headerDecoder.templateId();
        // An append entry is read piece by piece; the other entries are small and proposed in one piece: a view.
        final DirectBuffer buffer = AppendApplier.isAppend(templateId) ? null :
            entry.view(entryView, 0, entry.length(), entryScratch);
        switch (headerDecoder.templateId())
        {
            case AppendEntryDecoder.TEMPLATE_ID:
            case IdempotentAppendEntryDecoder.TEMPLATE_ID:
                return appends.apply(log, index, entry, templateId, blockLength, version);
            case ExporterPositionsEntryDecoder.TEMPLATE_ID:
                onExporterPositions(positionsDecoder.wrap(buffer, offset, blockLength, version));
                return NO_REPLY;
            case BackfillRegisterEntryDecoder.TEMPLATE_ID:
            case BackfillAttemptStartedEntryDecoder.TEMPLATE_ID:
            case BackfillCheckpointEntryDecoder.TEMPLATE_ID:
            case BackfillAttemptFailedEntryDecoder.TEMPLATE_ID:
            case BackfillCancelEntryDecoder.TEMPLATE_ID:
                onBackfill(index, buffer);
                return NO_REPLY;
            default:
                throw new IOException("entry " + index + " has unknown template " + headerDecoder.templateId());
        }
    }

    /** Drops every view of the entry just applied: they reach into Ratis's buffers. */
    private void releaseEntry()
    {
        appends.release();
        entryView.wrap(0, 0);
        entryBytes.release();
    }

    /**
     * Bytes the apply copied because a range of an entry crossed the entry's pieces: 0 for every entry this broker
     * proposes. For tests and diagnostics; safe from any thread.
     */
    public long gatheredBytes()
    {
        return entryBytes.gatheredBytes();
    }

    /** Entries applied in more than one piece (a leader's merged appends, as proposed); as {@link #gatheredBytes}. */
    public long entriesAppliedInPieces()
    {
        return entryBytes.entriesInPieces();
    }

    /**
     * Soft pause and pause hold the acknowledged positions, and this apply does not look at the exporting state (the
     * control group's, which replicas may apply at different moments): a leader proposes positions only while
     * exporting, and a pause or soft pause is answered only once positions it proposed before have committed
     * ({@link ExportingView#awaitExportsStopped}).
     */
    private void onExporterPositions(final ExporterPositionsEntryDecoder decoder)
    {
        for (final ExporterPositionsEntryDecoder.ExportersDecoder exporter : decoder.exporters())
        {
            final long position = exporter.position();
            // A version 4 entry reads the fields' null value: no range.
            final UnavailableRange range = UnavailableRange.ofEncoded(exporter.unavailableFrom(), exporter.unavailableTo());
            final String id = exporter.exporterId();
            exporterPositions.merge(id, position, Math::max);
            if (range != null)
            {
                unavailable.merge(id, range, UnavailableRange::merge);
            }
        }
    }

    private void onBackfill(final long index, final DirectBuffer entry)
    {
        if (backfills == null)
        {
            LOG.warn("partition {} on broker {}: backfill entry {} skipped, backfills are not wired", partitionId,
                brokerId, index);
            return;
        }
        try
        {
            backfills.apply(entry, 0, entry.capacity());
        }
        catch (final BackfillCodecException e)
        {
            LOG.warn("partition {} on broker {}: backfill entry {} skipped, unreadable: {}", partitionId, brokerId,
                index, e.getMessage());
        }
    }

    // ---------------------------------------------------------------------------------------------- state

    public int partitionId()
    {
        return partitionId;
    }

    /** Sets how the record log reserves disk space and waits for it; takes effect when the log is next opened. */
    public void segmentSpace(final SegmentSpace space)
    {
        this.segmentSpace = space;
    }

    public RecordLog recordLog()
    {
        return log;
    }

    @Override
    public long lastPosition()
    {
        final RecordLog log = this.log;
        return log == null ? 0 : log.lastPosition();
    }

    /** Lowest position the log still holds ({@link RecordLog#firstPosition}); 1 before it is open. */
    public long firstPosition()
    {
        final RecordLog log = this.log;
        return log == null ? 1 : log.firstPosition();
    }

    public ExportGate exportGate()
    {
        return exportGate;
    }

    /** Replicated acknowledged position of an exporter, 0 when it acknowledged nothing yet. */
    @Override
    public long exporterPosition(final String exporterId)
    {
        return exporterPositions.getOrDefault(exporterId, 0L);
    }

    /** Whether the exporter has a replicated position here (it ran on this partition before). */
    public boolean hasExporterPosition(final String exporterId)
    {
        return exporterPositions.containsKey(exporterId);
    }

    /** The latest range the exporter moved past because it was compacted away, or null. Any thread. */
    public UnavailableRange unavailableRange(final String exporterId)
    {
        return unavailable.get(exporterId);
    }

    /**
     * Moves an exporter's acknowledged position forward within a backfill registration's apply (a reset to
     * latest), inside the export gate, so no export is running on the position it replaces.
     */
    @Override
    public void advanceExporterPosition(final String exporterId, final long position)
    {
        exportGate.enter();
        try
        {
            exporterPositions.merge(exporterId, position, Math::max);
        }
        finally
        {
            exportGate.exit();
        }
    }

    /** Lowest acknowledged position over the configured exporters, -1 when none is configured. */
    public long exportedPosition()
    {
        long min = Long.MAX_VALUE;
        for (final String id : exporterIds)
        {
            min = Math.min(min, exporterPosition(id));
        }
        return min == Long.MAX_VALUE ? -1 : min;
    }

    /** Lowest position some exporter or an unfinished backfill task still needs. */
    public long compactionFloor()
    {
        long floor = Long.MAX_VALUE;
        for (final String id : exporterIds)
        {
            floor = Math.min(floor, exporterPositions.getOrDefault(id, 0L) + 1);
        }
        final PartitionBackfills backfills = this.backfills;
        return backfills == null ? floor : Math.min(floor, backfills.compactionFloor());
    }

    @Override
    public Set<String> exporterIds()
    {
        return exporterIds;
    }

    /** The remembered append ids; the apply thread only. */
    AppendIdempotency idempotency()
    {
        return idempotency;
    }
}
