package io.sluice.broker.partition;

import io.sluice.broker.append.AppendOutcomes;
import io.sluice.broker.append.AppendReplies;
import io.sluice.broker.backfill.PartitionBackfills;
import io.sluice.broker.raft.ReplicatedStateAdapter;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.sluice.protocol.backup.PartitionFiles;
import org.apache.ratis.server.storage.FileInfo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The Ratis state machine of one partition: a thin adapter over the replicated {@link PartitionState} and its
 * snapshots on disk ({@link PartitionSnapshotStore}). It hands committed entries to the state, keeps Ratis's
 * term and index bookkeeping (and the waiters on an applied index), takes and loads snapshots, and passes
 * leadership events to the {@link PartitionListener}.
 * <p>
 * A backup captures the latest snapshot's files ({@link #captureLatestSnapshot}) by hard links, under the same monitor
 * a snapshot is saved under, so the files it links are never the half-deleted ones of an older snapshot, and neither
 * a later snapshot nor compaction can take them away while they are uploaded. A replica restored from a backup
 * starts from the files the restore left in its broker's {@code restore/partition-<p>/} directory
 * ({@link #restoreFrom}) until its first own snapshot replaces them.
 * <p>
 * Thread-safety: Ratis applies entries and takes snapshots on one thread; getters are safe from any thread.
 */
public final class PartitionStateMachine extends ReplicatedStateAdapter
{
    private static final Logger LOG = LoggerFactory.getLogger(PartitionStateMachine.class);

    private final int brokerId;
    private final int partitionId;
    private final PartitionListener listener;
    private final PartitionState state;
    private final PartitionSnapshotStore snapshots = new PartitionSnapshotStore();
    /** Held while a snapshot is saved and while a backup links the latest one's files. */
    private final Object snapshotFiles = new Object();
    /** A restored replica's starting state (see the class comment); null when the broker was not restored. */
    private volatile Path restoreDirectory;

    public PartitionStateMachine(
        final int brokerId,
        final int partitionId,
        final Set<String> exporterIds,
        final long segmentSizeBytes,
        final PartitionListener listener)
    {
        this.brokerId = brokerId;
        this.partitionId = partitionId;
        this.listener = listener;
        this.state = new PartitionState(brokerId, partitionId, exporterIds, segmentSizeBytes, listener);
    }

    /** The replicated state this adapter applies entries to. */
    public PartitionState state()
    {
        return state;
    }

    /** Wires the partition's backfills in; before the Raft server starts (it loads the snapshot). */
    public void backfills(final PartitionBackfills backfills)
    {
        state.backfills(backfills);
    }

    /** Where a restore leaves this replica's starting state; before the Raft server starts. */
    public void restoreFrom(final Path directory)
    {
        this.restoreDirectory = directory;
    }

    // ------------------------------------------------------------------------------------------- lifecycle

    @Override
    protected void initStorage(final RaftStorage raftStorage) throws IOException
    {
        snapshots.init(raftStorage);
    }

    @Override
    public void pause()
    {
        enterPaused();
        state.closeLog();
    }

    @Override
    public void reinitialize() throws IOException
    {
        state.closeLog();
        reload();
        LOG.info("partition {} on broker {}: reloaded from installed snapshot {} (last position {})",
            partitionId, brokerId, snapshots.latest(), state.lastPosition());
    }

    @Override
    protected void load() throws IOException
    {
        final PartitionSnapshotStore.Loaded loaded = snapshots.loadLatest();
        if (loaded == null && restoredState() != null)
        {
            final PartitionSnapshot restored = adoptRestoredFiles();
            state.restore(snapshots.directory(), restored);
            LOG.info("partition {} on broker {}: started from the restored backup in {} (last position {})",
                partitionId, brokerId, restoreDirectory, state.lastPosition());
            return;
        }
        state.restore(snapshots.directory(), loaded == null ? null : loaded.snapshot());
        if (loaded != null)
        {
            setLastAppliedTermIndex(loaded.termIndex());
            snapshots.listed(loaded.file(), loaded.termIndex(), state.recordLog().sealedSegmentFiles());
        }
    }

    @Override
    public void close() throws IOException
    {
        state.closeLog();
        super.close();
    }

    // ---------------------------------------------------------------------------------------------- apply

    @Override
    protected byte[] apply(final long index, final ByteString data) throws IOException
    {
        // Views, not a copy: on the leader the entry it proposed, which may be a rope over the client batches
        // (asReadOnlyByteBuffer would flatten it into one new array).
        return state.apply(index, data.asReadOnlyByteBufferList());
    }

    @Override
    protected String replicaName()
    {
        return "partition " + partitionId + " on broker " + brokerId;
    }

    // ------------------------------------------------------------------------------------------- snapshots

    @Override
    protected void saveSnapshot(final TermIndex last) throws IOException
    {
        final PartitionSnapshot snapshot;
        final List<Path> segments;
        final int deleted;
        final long floor = state.compactionFloor();
        synchronized (snapshotFiles)
        {
            deleted = state.sealAndCompactLog(floor);
            snapshot = state.snapshot();
            segments = state.recordLog().sealedSegmentFiles();
            snapshots.save(last, snapshot, segments);
        }
        if (restoredState() != null)
        {
            // This replica's own snapshot holds everything the restored state did: it is not needed again.
            deleteTree(restoreDirectory);
        }
        LOG.info("partition {} on broker {}: snapshot at {} (last position {}, {} segments kept, {} compacted below {})",
            partitionId, brokerId, last, snapshot.lastPosition(), segments.size(), deleted, floor);
    }

    /** The latest snapshot's files, linked into a backup's staging directory, and what that snapshot holds. */
    public record CapturedSnapshot(long lastPosition, java.util.Map<String, Long> exporterPositions, List<Path> files)
    {
    }

    /**
     * Hard-links the latest snapshot's state file (as {@value PartitionFiles#STATE}) and its sealed record segments
     * (under {@value PartitionFiles#RECORDS_PREFIX}) into {@code staging}, and reads what the state holds; null when
     * there is no snapshot yet. Links cost no copy and keep the files whatever a later snapshot deletes.
     */
    public CapturedSnapshot captureLatestSnapshot(final Path staging) throws IOException
    {
        synchronized (snapshotFiles)
        {
            final SnapshotInfo latest = snapshots.latest();
            if (latest == null)
            {
                return null;
            }
            final List<FileInfo> files = latest.getFiles();
            final Path stateFile = files.get(0).getPath();
            final PartitionSnapshot snapshot = PartitionSnapshot.readFrom(stateFile);
            final List<Path> linked = new ArrayList<>();
            Files.createDirectories(staging.resolve(PartitionFiles.RECORDS_PREFIX));
            linked.add(link(stateFile, staging.resolve(PartitionFiles.STATE)));
            for (final FileInfo segment : files.subList(1, files.size()))
            {
                linked.add(link(segment.getPath(),
                    staging.resolve(PartitionFiles.RECORDS_PREFIX + segment.getPath().getFileName())));
            }
            return new CapturedSnapshot(snapshot.lastPosition(), snapshot.exporterPositions(), linked);
        }
    }

    private static Path link(final Path source, final Path target) throws IOException
    {
        try
        {
            return Files.createLink(target, source);
        }
        catch (final UnsupportedOperationException | IOException e)
        {
            // Another file system (or none that links): a copy keeps the file as well, at its cost.
            return Files.copy(source, target);
        }
    }

    /** The restored state file, when this replica was restored and has no snapshot of its own yet; else null. */
    private Path restoredState()
    {
        final Path dir = restoreDirectory;
        if (dir == null)
        {
            return null;
        }
        final Path file = dir.resolve(PartitionFiles.STATE);
        return Files.isRegularFile(file) ? file : null;
    }

    /**
     * Moves the restored record segments into the record log's directory (a restart before the first own snapshot
     * finds them there already) and reads the restored state.
     */
    private PartitionSnapshot adoptRestoredFiles() throws IOException
    {
        final Path records = snapshots.directory().resolve(io.sluice.broker.log.RecordLog.DIRECTORY);
        Files.createDirectories(records);
        final Path restoredRecords = restoreDirectory.resolve(PartitionFiles.RECORDS_PREFIX);
        if (Files.isDirectory(restoredRecords))
        {
            try (Stream<Path> segments = Files.list(restoredRecords))
            {
                for (final Path segment : segments.toList())
                {
                    Files.move(segment, records.resolve(segment.getFileName()));
                }
            }
        }
        final PartitionSnapshot restored = PartitionSnapshot.readFrom(restoredState());
        // The restored segments are sealed: appends go to a new, empty active segment after them, as after a roll.
        final Path active = records.resolve(String.format("segment-%020d.log", restored.lastPosition() + 1));
        if (!Files.exists(active))
        {
            Files.createFile(active);
        }
        return restored;
    }

    private static void deleteTree(final Path dir) throws IOException
    {
        if (dir == null || !Files.exists(dir))
        {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir))
        {
            for (final Path path : walk.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(path);
            }
        }
    }

    @Override
    public SnapshotInfo getLatestSnapshot()
    {
        return snapshots.latest();
    }

    @Override
    public StateMachineStorage getStateMachineStorage()
    {
        return snapshots.storage();
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

    /** See {@link AppendReplies#decode}. */
    public static AppendOutcomes decodeAppendResult(final Message message)
    {
        return AppendReplies.decode(message.getContent().toByteArray());
    }
}
