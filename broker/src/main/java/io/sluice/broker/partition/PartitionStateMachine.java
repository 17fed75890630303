package io.sluice.broker.partition;

import io.sluice.broker.backfill.BackfillCodec;
import io.sluice.broker.backfill.BackfillCodecException;
import io.sluice.broker.backfill.PartitionBackfills;
import io.sluice.broker.log.RecordLog;
import io.sluice.broker.log.codecs.BackfillEntryDecoder;
import io.sluice.broker.log.codecs.AppendEntryDecoder;
import io.sluice.broker.log.codecs.AppendResultDecoder;
import io.sluice.broker.log.codecs.AppendResultEncoder;
import io.sluice.broker.log.codecs.AppendBatchesResultDecoder;
import io.sluice.broker.log.codecs.AppendBatchesResultEncoder;
import io.sluice.broker.log.codecs.AppendOutcome;
import io.sluice.broker.log.codecs.IdempotentAppendEntryDecoder;
import io.sluice.broker.log.codecs.ExporterPositionsEntryDecoder;
import io.sluice.broker.log.codecs.ExportingStateCode;
import io.sluice.broker.log.codecs.ExportingStateEntryDecoder;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.broker.log.codecs.PartitionSnapshotDecoder;
import io.sluice.broker.log.codecs.PartitionSnapshotEncoder;
import io.sluice.protocol.codecs.ExportingState;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;

/**
 * The replicated state of one partition: the record log, the exporting state and the exporters'
 * acknowledged positions. Every replica applies the same committed entries in the same order, so every
 * replica holds the same state; the apply path is one dispatch on the entry's template id.
 * <p>
 * On-disk layout, in the group's state machine directory ({@code <broker>/raft/<group uuid>/sm/}):
 * <pre>
 *   snapshot.&lt;term&gt;_&lt;index&gt;(.md5)   {@code PartitionSnapshot}: last position and its Raft index,
 *                                   exporting state and version, exporter positions, backfills,
 *                                   remembered append ids ({@link AppendIdempotency})
 *   records/segment-*.log(.md5)      the record log, see {@link RecordLog}
 * </pre>
 * A snapshot lists its state file and the sealed record segments, so a replica that installs it from the
 * leader (after the Raft log was purged) receives every record no exporter has acknowledged yet.
 * Entries after the last snapshot are applied again on restart: an append entry whose Raft index is not
 * above the record log's last one is already in the log and is not written again, but its positions are
 * counted on from the snapshot's last position ({@code appliedPosition}) so the append ids it carried are
 * remembered with the positions they were first given; the other entries are idempotent.
 * <p>
 * Thread-safety: Ratis applies entries and takes snapshots on one thread; getters are safe from any
 * thread. {@link #exportGate()} is held while an exporting state change is applied, so an exporter that
 * exports under the gate never exports after a pause has been applied.
 */
public final class PartitionStateMachine extends BaseStateMachine implements PartitionBackfills.PartitionState
{
    private static final Logger LOG = LoggerFactory.getLogger(PartitionStateMachine.class);

    private final int brokerId;
    private final int partitionId;
    private final Set<String> exporterIds;
    private final long segmentSizeBytes;
    private final PartitionListener listener;
    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private final ReentrantLock exportGate = new ReentrantLock();
    private final Map<String, Long> exporterPositions = new ConcurrentHashMap<>();
    private final TreeMap<Long, List<CompletableFuture<Void>>> appliedWaiters = new TreeMap<>();
    private final Set<VersionWaiter> versionWaiters = ConcurrentHashMap.newKeySet();

    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final AppendEntryDecoder appendDecoder = new AppendEntryDecoder();
    private final ExportingStateEntryDecoder stateDecoder = new ExportingStateEntryDecoder();
    private final ExporterPositionsEntryDecoder positionsDecoder = new ExporterPositionsEntryDecoder();
    private final BackfillEntryDecoder backfillDecoder = new BackfillEntryDecoder();
    private final IdempotentAppendEntryDecoder idempotentDecoder = new IdempotentAppendEntryDecoder();
    private final AppendIdempotency idempotency = new AppendIdempotency();
    private long[] batchOutcomes = new long[3 * 16];
    private int[] batchRecordCounts = new int[16];
    private final UnsafeBuffer keyView = new UnsafeBuffer(0, 0);
    private final UnsafeBuffer payloadView = new UnsafeBuffer(0, 0);
    private final UnsafeBuffer backfillStateNone = new UnsafeBuffer(new byte[0]);

    private volatile RecordLog log;
    /** Last position the applied entries gave out; equals the log's last position once a replay caught up. */
    private long appliedPosition;
    private volatile ExportingState exportingState = ExportingState.EXPORTING;
    private volatile long exportingStateVersion;
    private volatile SnapshotInfo latestSnapshot;
    private Path stateMachineDir;
    private PartitionBackfills backfills;

    public PartitionStateMachine(
        final int brokerId,
        final int partitionId,
        final Set<String> exporterIds,
        final long segmentSizeBytes,
        final PartitionListener listener)
    {
        this.brokerId = brokerId;
        this.partitionId = partitionId;
        this.exporterIds = Set.copyOf(exporterIds);
        this.segmentSizeBytes = segmentSizeBytes;
        this.listener = listener;
    }

    /** Wires the partition's backfills in; before the Raft server starts (it loads the snapshot). */
    public void backfills(final PartitionBackfills backfills)
    {
        this.backfills = backfills;
    }

    @Override
    public void initialize(final RaftServer server, final RaftGroupId groupId, final RaftStorage raftStorage)
        throws IOException
    {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        stateMachineDir = raftStorage.getStorageDir().getStateMachineDir().toPath();
        getLifeCycle().startAndTransition(this::load);
    }

    @Override
    public void pause()
    {
        // A snapshot from the leader is about to replace the directory; Ratis reloads only a PAUSED machine.
        getLifeCycle().transitionIfValid(LifeCycle.State.PAUSING);
        getLifeCycle().transitionIfValid(LifeCycle.State.PAUSED);
        closeLog();
    }

    @Override
    public void reinitialize() throws IOException
    {
        closeLog();
        getLifeCycle().transitionIfValid(LifeCycle.State.STARTING);
        load();
        getLifeCycle().transitionIfValid(LifeCycle.State.RUNNING);
        LOG.info("partition {} on broker {}: reloaded from installed snapshot {} (last position {})",
            partitionId, brokerId, latestSnapshot, log.lastPosition());
        completeVersionWaiters();
    }

    private void load() throws IOException
    {
        final SingleFileSnapshotInfo snapshot = storage.loadLatestSnapshot();
        long lastPosition = 0;
        long lastRecordRaftIndex = 0;
        exporterPositions.clear();
        exportingState = ExportingState.EXPORTING;
        exportingStateVersion = 0;
        UnsafeBuffer backfillState = null;
        idempotency.clear();
        if (snapshot != null)
        {
            final File file = snapshot.getFile().getPath().toFile();
            final UnsafeBuffer buffer = new UnsafeBuffer(Files.readAllBytes(file.toPath()));
            final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
            if (header.schemaId() != PartitionSnapshotDecoder.SCHEMA_ID ||
                header.templateId() != PartitionSnapshotDecoder.TEMPLATE_ID)
            {
                throw new IOException("partition " + partitionId + ": " + file + " is not a partition snapshot");
            }
            final PartitionSnapshotDecoder decoder = new PartitionSnapshotDecoder()
                .wrap(buffer, header.encodedLength(), header.blockLength(), header.version());
            lastPosition = decoder.lastPosition();
            lastRecordRaftIndex = decoder.lastRecordRaftIndex();
            exportingState = toExportingState(decoder.exportingState());
            exportingStateVersion = decoder.exportingStateVersion();
            for (final PartitionSnapshotDecoder.ExportersDecoder exporter : decoder.exporters())
            {
                final long position = exporter.position();
                exporterPositions.put(exporter.exporterId(), position);
            }
            final int backfillsLength = decoder.backfillsLength();
            if (backfillsLength > 0)
            {
                backfillState = new UnsafeBuffer(new byte[backfillsLength]);
                decoder.getBackfills(backfillState, 0, backfillsLength);
            }
            final int idempotencyLength = decoder.idempotencyLength();
            if (idempotencyLength > 0)
            {
                final UnsafeBuffer ids = new UnsafeBuffer(new byte[idempotencyLength]);
                decoder.getIdempotency(ids, 0, idempotencyLength);
                idempotency.read(ids, 0, idempotencyLength);
            }
            setLastAppliedTermIndex(snapshot.getTermIndex());
        }
        if (backfills != null)
        {
            if (backfillState == null)
            {
                // No backfills in the snapshot (or none at all): an installed snapshot replaces any held here.
                backfillState = new UnsafeBuffer(new byte[64]);
                final int length = BackfillCodec.encodeSnapshot(List.of(), backfillState, 0);
                backfills.readSnapshot(backfillState, 0, length);
            }
            else
            {
                backfills.readSnapshot(backfillState, 0, backfillState.capacity());
            }
        }
        log = RecordLog.open(stateMachineDir.resolve(RecordLog.DIRECTORY), segmentSizeBytes,
            lastPosition, lastRecordRaftIndex);
        appliedPosition = lastPosition;
        latestSnapshot = snapshot == null ? null :
            snapshotInfo(snapshot.getFile().getPath(), snapshot.getTermIndex());
    }

    // ---------------------------------------------------------------------------------------------- apply

    @Override
    public CompletableFuture<Message> applyTransaction(final TransactionContext trx)
    {
        final LogEntryProto entry = trx.getLogEntry();
        final long index = entry.getIndex();
        try
        {
            final byte[] bytes = entry.getStateMachineLogEntry().getLogData().toByteArray();
            return CompletableFuture.completedFuture(apply(index, new UnsafeBuffer(bytes)));
        }
        catch (final Exception e)
        {
            LOG.error("partition {} on broker {}: failed to apply entry {}", partitionId, brokerId, index, e);
            return CompletableFuture.failedFuture(e);
        }
        finally
        {
            updateLastAppliedTermIndex(entry.getTerm(), index);
            completeAppliedWaiters(index);
        }
    }

    private Message apply(final long index, final UnsafeBuffer buffer) throws IOException
    {
        headerDecoder.wrap(buffer, 0);
        if (headerDecoder.schemaId() != MessageHeaderDecoder.SCHEMA_ID)
        {
            throw new IOException("entry " + index + " has schema " + headerDecoder.schemaId());
        }
        final int offset = headerDecoder.encodedLength();
        final int blockLength = headerDecoder.blockLength();
        final int version = headerDecoder.version();
        switch (headerDecoder.templateId())
        {
            case AppendEntryDecoder.TEMPLATE_ID:
                return onAppend(index, appendDecoder.wrap(buffer, offset, blockLength, version));
            case ExportingStateEntryDecoder.TEMPLATE_ID:
                onExportingState(stateDecoder.wrap(buffer, offset, blockLength, version));
                return Message.EMPTY;
            case ExporterPositionsEntryDecoder.TEMPLATE_ID:
                onExporterPositions(positionsDecoder.wrap(buffer, offset, blockLength, version));
                return Message.EMPTY;
            case BackfillEntryDecoder.TEMPLATE_ID:
                onBackfill(index, backfillDecoder.wrap(buffer, offset, blockLength, version));
                return Message.EMPTY;
            case IdempotentAppendEntryDecoder.TEMPLATE_ID:
                return onIdempotentAppend(index, idempotentDecoder.wrap(buffer, offset, blockLength, version));
            default:
                throw new IOException("entry " + index + " has unknown template " + headerDecoder.templateId());
        }
    }

    private Message onAppend(final long index, final AppendEntryDecoder decoder) throws IOException
    {
        final RecordLog log = this.log;
        final AppendEntryDecoder.RecordsDecoder records = decoder.records();
        final int count = records.count();
        final long firstPosition = appliedPosition + 1;
        appliedPosition += count;
        if (index <= log.lastRaftIndex())
        {
            // Applied again after a restart: the records are already in the log.
            return Message.EMPTY;
        }
        checkAppliedPosition(log, firstPosition);
        for (final AppendEntryDecoder.RecordsDecoder record : records)
        {
            final long timestamp = record.timestamp();
            final int keyLength = record.keyLength();
            record.wrapKey(keyView);
            final int payloadLength;
            record.wrapPayload(payloadView);
            payloadLength = payloadView.capacity();
            log.append(index, timestamp, keyView, 0, keyLength, payloadView, 0, payloadLength);
        }
        log.flushWrites();
        listener.onRecordsApplied(partitionId, log.lastPosition());
        return appendResult(firstPosition, count);
    }

    /**
     * Applies client batches of which some carry an id: a batch whose id is remembered (and not expired on the
     * replicated clock) appends nothing and answers the remembered positions, or CONFLICT when its request digest
     * differs; any other batch appends and, with an id, is remembered from now on.
     */
    private Message onIdempotentAppend(final long index, final IdempotentAppendEntryDecoder decoder) throws IOException
    {
        final RecordLog log = this.log;
        final boolean inLog = index <= log.lastRaftIndex();
        idempotency.advanceClock(decoder.timestampMs());
        final long nowMs = idempotency.clockMs();
        final IdempotentAppendEntryDecoder.BatchesDecoder batches = decoder.batches();
        final int batchCount = batches.count();
        if (batchRecordCounts.length < batchCount)
        {
            batchRecordCounts = new int[batchCount];
            batchOutcomes = new long[3 * batchCount];
        }
        final long firstPosition = appliedPosition + 1;
        int b = 0;
        for (final IdempotentAppendEntryDecoder.BatchesDecoder batch : batches)
        {
            final int recordCount = batch.recordCount();
            final IdempotencyTable table = idempotency.table(batch.scope());
            long outcome = AppendOutcome.APPENDED.value();
            long first = appliedPosition + 1;
            long count = recordCount;
            if (table != null)
            {
                final int slot = table.find(batch.idHigh(), batch.idLow(), nowMs);
                if (slot >= 0)
                {
                    outcome = table.digest(slot) == batch.bodyDigest() ?
                        AppendOutcome.DUPLICATE.value() : AppendOutcome.CONFLICT.value();
                    first = outcome == AppendOutcome.DUPLICATE.value() ? table.firstPosition(slot) : -1;
                    count = outcome == AppendOutcome.DUPLICATE.value() ? table.count(slot) : 0;
                }
                else
                {
                    table.put(batch.idHigh(), batch.idLow(), batch.bodyDigest(), first, recordCount,
                        nowMs + Math.max(0, batch.windowMs()));
                }
            }
            if (outcome == AppendOutcome.APPENDED.value())
            {
                appliedPosition += recordCount;
            }
            batchRecordCounts[b] = recordCount;
            batchOutcomes[3 * b] = first;
            batchOutcomes[3 * b + 1] = count;
            batchOutcomes[3 * b + 2] = outcome;
            b++;
        }
        // Applied again after a restart with its records in the log already: positions were counted above, the
        // ids remembered with them, and nothing is written again.
        if (!inLog)
        {
            checkAppliedPosition(log, firstPosition);
            final IdempotentAppendEntryDecoder.RecordsDecoder records = decoder.records();
            int batchIndex = 0;
            int leftInBatch = batchCount == 0 ? 0 : batchRecordCounts[0];
            boolean written = false;
            for (final IdempotentAppendEntryDecoder.RecordsDecoder record : records)
            {
                while (leftInBatch == 0 && batchIndex < batchCount - 1)
                {
                    leftInBatch = batchRecordCounts[++batchIndex];
                }
                leftInBatch--;
                final long timestamp = record.timestamp();
                final int keyLength = record.keyLength();
                record.wrapKey(keyView);
                record.wrapPayload(payloadView);
                if (batchOutcomes[3 * batchIndex + 2] == AppendOutcome.APPENDED.value())
                {
                    log.append(index, timestamp, keyView, 0, keyLength, payloadView, 0, payloadView.capacity());
                    written = true;
                }
            }
            if (written)
            {
                log.flushWrites();
                listener.onRecordsApplied(partitionId, log.lastPosition());
            }
        }
        return appendBatchesResult(batchOutcomes, batchCount);
    }

    private void checkAppliedPosition(final RecordLog log, final long firstPosition)
    {
        if (log.lastPosition() + 1 != firstPosition)
        {
            // Cannot happen while replays count positions as first given; log it loudly rather than hide it.
            LOG.error("partition {} on broker {}: applied positions expected {} next, the log has {} next",
                partitionId, brokerId, firstPosition, log.lastPosition() + 1);
        }
    }

    private void onExportingState(final ExportingStateEntryDecoder decoder)
    {
        final long version = decoder.version();
        final ExportingState state = toExportingState(decoder.state());
        if (version <= exportingStateVersion)
        {
            // Every replica of an operation submits the same version, so repeats are routine; an older version
            // losing to a newer one is what an operator wants to see.
            if (version == exportingStateVersion)
            {
                LOG.debug("partition {} on broker {}: exporting state {} version {} already held",
                    partitionId, brokerId, state, version);
            }
            else
            {
                LOG.info("partition {} on broker {}: ignored exporting state {} version {}, holding {} version {}",
                    partitionId, brokerId, state, version, exportingState, exportingStateVersion);
            }
            return;
        }
        exportGate.lock();
        try
        {
            exportingState = state;
            exportingStateVersion = version;
        }
        finally
        {
            exportGate.unlock();
        }
        LOG.info("partition {} on broker {}: exporting state is now {} (version {})",
            partitionId, brokerId, state, version);
        completeVersionWaiters();
        listener.onExportingStateApplied(partitionId, state);
    }

    /**
     * Completes with true once this replica has applied an exporting state of at least {@code version},
     * with false after {@code timeoutMs}.
     */
    public CompletableFuture<Boolean> awaitExportingStateVersion(final long version, final long timeoutMs)
    {
        if (exportingStateVersion >= version)
        {
            return CompletableFuture.completedFuture(true);
        }
        final VersionWaiter waiter = new VersionWaiter(version);
        versionWaiters.add(waiter);
        waiter.future.completeOnTimeout(false, timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS)
            .whenComplete((r, e) -> versionWaiters.remove(waiter));
        if (exportingStateVersion >= version) // applied between the check and the registration
        {
            waiter.future.complete(true);
        }
        return waiter.future;
    }

    private void completeVersionWaiters()
    {
        final long applied = exportingStateVersion;
        for (final VersionWaiter waiter : versionWaiters)
        {
            if (waiter.version <= applied)
            {
                waiter.future.complete(true);
            }
        }
    }

    private static final class VersionWaiter
    {
        final long version;
        final CompletableFuture<Boolean> future = new CompletableFuture<>();

        VersionWaiter(final long version)
        {
            this.version = version;
        }
    }

    private void onExporterPositions(final ExporterPositionsEntryDecoder decoder)
    {
        // Soft pause (and pause) hold the acknowledged positions, also against acks submitted before it.
        final boolean advance = exportingState == ExportingState.EXPORTING;
        for (final ExporterPositionsEntryDecoder.ExportersDecoder exporter : decoder.exporters())
        {
            final long position = exporter.position();
            final String id = exporter.exporterId();
            if (advance)
            {
                exporterPositions.merge(id, position, Math::max);
            }
        }
    }

    private void onBackfill(final long index, final BackfillEntryDecoder decoder)
    {
        final int length = decoder.payloadLength();
        final int offset = decoder.limit() + BackfillEntryDecoder.payloadHeaderLength();
        if (backfills == null)
        {
            LOG.warn("partition {} on broker {}: backfill entry {} skipped, backfills are not wired", partitionId,
                brokerId, index);
            return;
        }
        try
        {
            backfills.apply(decoder.buffer(), offset, length);
        }
        catch (final BackfillCodecException e)
        {
            LOG.warn("partition {} on broker {}: backfill entry {} skipped, unreadable: {}", partitionId, brokerId,
                index, e.getMessage());
        }
    }

    @Override
    public void notifyTermIndexUpdated(final long term, final long index)
    {
        super.notifyTermIndexUpdated(term, index);
        completeAppliedWaiters(index);
    }

    /** Completes once this replica has applied the entry at {@code index}. */
    public CompletableFuture<Void> awaitApplied(final long index)
    {
        final CompletableFuture<Void> applied = new CompletableFuture<>();
        synchronized (appliedWaiters)
        {
            if (lastAppliedIndex() >= index)
            {
                return CompletableFuture.completedFuture(null);
            }
            appliedWaiters.computeIfAbsent(index, (i) -> new ArrayList<>(1)).add(applied);
        }
        return applied;
    }

    private void completeAppliedWaiters(final long index)
    {
        List<CompletableFuture<Void>> ready = null;
        synchronized (appliedWaiters)
        {
            final Iterator<Map.Entry<Long, List<CompletableFuture<Void>>>> it =
                appliedWaiters.headMap(index, true).entrySet().iterator();
            while (it.hasNext())
            {
                if (ready == null)
                {
                    ready = new ArrayList<>();
                }
                ready.addAll(it.next().getValue());
                it.remove();
            }
        }
        if (ready != null)
        {
            ready.forEach((f) -> f.complete(null));
        }
    }

    public long lastAppliedIndex()
    {
        final TermIndex applied = getLastAppliedTermIndex();
        return applied == null ? RaftLog.INVALID_LOG_INDEX : applied.getIndex();
    }

    // ------------------------------------------------------------------------------------------- snapshots

    @Override
    public long takeSnapshot() throws IOException
    {
        final TermIndex last = getLastAppliedTermIndex();
        if (last == null || last.getIndex() <= 0)
        {
            return RaftLog.INVALID_LOG_INDEX;
        }
        final RecordLog log = this.log;
        log.flush();
        log.roll();
        final long floor = compactionFloor();
        final int deleted = log.compact(floor);

        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        final PartitionSnapshotEncoder encoder = new PartitionSnapshotEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .lastPosition(log.lastPosition())
            .lastRecordRaftIndex(log.lastRaftIndex())
            .exportingState(toCode(exportingState))
            .exportingStateVersion(exportingStateVersion);
        final Map<String, Long> positions = Map.copyOf(exporterPositions);
        final PartitionSnapshotEncoder.ExportersEncoder exporters = encoder.exportersCount(positions.size());
        positions.forEach((id, position) -> exporters.next().position(position).exporterId(id));
        if (backfills != null)
        {
            final ExpandableArrayBuffer backfillState = new ExpandableArrayBuffer(256);
            final int backfillsLength = backfills.writeSnapshot(backfillState, 0);
            encoder.putBackfills(backfillState, 0, backfillsLength);
        }
        else
        {
            encoder.putBackfills(backfillStateNone, 0, 0);
        }
        final UnsafeBuffer ids = new UnsafeBuffer(new byte[idempotency.snapshotLength()]);
        final int idsLength = idempotency.write(ids, 0);
        encoder.putIdempotency(ids, 0, idsLength);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();

        final File file = storage.getSnapshotFile(last.getTerm(), last.getIndex());
        final Path tmp = file.toPath().resolveSibling(file.getName() + ".writing");
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING))
        {
            channel.write(java.nio.ByteBuffer.wrap(buffer.byteArray(), 0, length));
            channel.force(true);
        }
        Files.move(tmp, file.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        MD5FileUtil.computeAndSaveMd5ForFile(file);
        latestSnapshot = snapshotInfo(file.toPath(), last);
        deleteOlderSnapshots(file.toPath());
        LOG.info("partition {} on broker {}: snapshot at {} (last position {}, {} segments kept, {} compacted below {})",
            partitionId, brokerId, last, log.lastPosition(), log.sealedSegmentFiles().size(), deleted, floor);
        return last.getIndex();
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

    private SnapshotInfo snapshotInfo(final Path stateFile, final TermIndex termIndex)
    {
        final List<FileInfo> files = new ArrayList<>();
        files.add(new FileInfo(stateFile, null));
        for (final Path segment : log.sealedSegmentFiles())
        {
            files.add(new FileInfo(segment, null));
        }
        return new FileListSnapshotInfo(files, termIndex);
    }

    private void deleteOlderSnapshots(final Path keep) throws IOException
    {
        final List<Path> old;
        try (Stream<Path> listing = Files.list(stateMachineDir))
        {
            old = listing.filter((p) ->
                {
                    final String name = p.getFileName().toString();
                    return name.startsWith("snapshot.") && !name.startsWith(keep.getFileName().toString());
                })
                .toList();
        }
        for (final Path path : old)
        {
            Files.deleteIfExists(path);
        }
    }

    @Override
    public SnapshotInfo getLatestSnapshot()
    {
        return latestSnapshot;
    }

    @Override
    public StateMachineStorage getStateMachineStorage()
    {
        return storage;
    }

    // ------------------------------------------------------------------------------------------- leadership

    @Override
    public void notifyLeaderReady()
    {
        listener.onLeaderReady(partitionId);
    }

    @Override
    public void notifyLeaderChanged(final RaftGroupMemberId groupMemberId, final RaftPeerId newLeaderId)
    {
        listener.onLeaderChanged(partitionId, newLeaderId);
    }

    @Override
    public void notifyNotLeader(final Collection<TransactionContext> pendingEntries)
    {
        listener.onLeaderChanged(partitionId, null);
    }

    @Override
    public void close() throws IOException
    {
        closeLog();
        super.close();
    }

    private void closeLog()
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

    // ---------------------------------------------------------------------------------------------- state

    public int partitionId()
    {
        return partitionId;
    }

    public RecordLog recordLog()
    {
        return log;
    }

    public long lastPosition()
    {
        final RecordLog log = this.log;
        return log == null ? 0 : log.lastPosition();
    }

    public ExportingState exportingState()
    {
        return exportingState;
    }

    public long exportingStateVersion()
    {
        return exportingStateVersion;
    }

    public ReentrantLock exportGate()
    {
        return exportGate;
    }

    /** Replicated acknowledged position of an exporter, 0 when it acknowledged nothing yet. */
    public long exporterPosition(final String exporterId)
    {
        return exporterPositions.getOrDefault(exporterId, 0L);
    }

    /**
     * Moves an exporter's acknowledged position forward within a backfill registration's apply (a reset to
     * latest), under the export gate like an exporting state change.
     */
    @Override
    public void advanceExporterPosition(final String exporterId, final long position)
    {
        exportGate.lock();
        try
        {
            exporterPositions.merge(exporterId, position, Math::max);
        }
        finally
        {
            exportGate.unlock();
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

    public Set<String> exporterIds()
    {
        return exporterIds;
    }

    // ---------------------------------------------------------------------------------------------- codecs

    static Message appendResult(final long firstPosition, final int count)
    {
        final byte[] bytes = new byte[MessageHeaderEncoder.ENCODED_LENGTH + AppendResultEncoder.BLOCK_LENGTH];
        new AppendResultEncoder()
            .wrapAndApplyHeader(new UnsafeBuffer(bytes), 0, new MessageHeaderEncoder())
            .firstPosition(firstPosition)
            .count(count);
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(bytes));
    }

    static Message appendBatchesResult(final long[] outcomes, final int batchCount)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[MessageHeaderEncoder.ENCODED_LENGTH +
            AppendBatchesResultEncoder.BLOCK_LENGTH + AppendBatchesResultEncoder.BatchesEncoder.sbeHeaderSize() +
            batchCount * AppendBatchesResultEncoder.BatchesEncoder.sbeBlockLength()]);
        final AppendBatchesResultEncoder encoder = new AppendBatchesResultEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        final AppendBatchesResultEncoder.BatchesEncoder batches = encoder.batchesCount(batchCount);
        for (int i = 0; i < batchCount; i++)
        {
            batches.next()
                .firstPosition(outcomes[3 * i])
                .recordCount((int)outcomes[3 * i + 1])
                .outcome(AppendOutcome.get((short)outcomes[3 * i + 2]));
        }
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(buffer.byteArray()));
    }

    /**
     * Decodes an append entry's reply: {firstPosition, count} for an {@code AppendEntry}, {firstPosition, count,
     * outcome} per batch for an {@code IdempotentAppendEntry}, or null when the reply carries none.
     */
    public static long[] decodeAppendResult(final Message message)
    {
        final byte[] bytes = message.getContent().toByteArray();
        if (bytes.length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            return null;
        }
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
        if (header.templateId() == AppendBatchesResultDecoder.TEMPLATE_ID)
        {
            final AppendBatchesResultDecoder decoder = new AppendBatchesResultDecoder()
                .wrap(buffer, header.encodedLength(), header.blockLength(), header.version());
            final AppendBatchesResultDecoder.BatchesDecoder batches = decoder.batches();
            final long[] outcomes = new long[3 * batches.count()];
            int i = 0;
            for (final AppendBatchesResultDecoder.BatchesDecoder batch : batches)
            {
                outcomes[i++] = batch.firstPosition();
                outcomes[i++] = batch.recordCount();
                outcomes[i++] = batch.outcomeRaw();
            }
            return outcomes;
        }
        if (bytes.length < MessageHeaderDecoder.ENCODED_LENGTH + AppendResultDecoder.BLOCK_LENGTH ||
            header.templateId() != AppendResultDecoder.TEMPLATE_ID)
        {
            return null;
        }
        final AppendResultDecoder decoder = new AppendResultDecoder()
            .wrap(buffer, header.encodedLength(), header.blockLength(), header.version());
        return new long[] {decoder.firstPosition(), decoder.count()};
    }

    public static ExportingStateCode toCode(final ExportingState state)
    {
        return switch (state)
        {
            case PAUSED -> ExportingStateCode.PAUSED;
            case SOFT_PAUSED -> ExportingStateCode.SOFT_PAUSED;
            default -> ExportingStateCode.EXPORTING;
        };
    }

    static ExportingState toExportingState(final ExportingStateCode code)
    {
        return switch (code)
        {
            case PAUSED -> ExportingState.PAUSED;
            case SOFT_PAUSED -> ExportingState.SOFT_PAUSED;
            case EXPORTING -> ExportingState.EXPORTING;
            default -> throw new IllegalStateException("unknown exporting state code " + code);
        };
    }
}
