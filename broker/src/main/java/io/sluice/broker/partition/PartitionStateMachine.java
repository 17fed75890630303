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

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * The Ratis state machine of one partition: a thin adapter over the replicated {@link PartitionState} and its
 * snapshots on disk ({@link PartitionSnapshotStore}). It hands committed entries to the state, keeps Ratis's
 * term and index bookkeeping (and the waiters on an applied index), takes and loads snapshots, and passes
 * leadership events to the {@link PartitionListener}.
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
        final long floor = state.compactionFloor();
        final int deleted = state.sealAndCompactLog(floor);
        final PartitionSnapshot snapshot = state.snapshot();
        final List<Path> segments = state.recordLog().sealedSegmentFiles();
        snapshots.save(last, snapshot, segments);
        LOG.info("partition {} on broker {}: snapshot at {} (last position {}, {} segments kept, {} compacted below {})",
            partitionId, brokerId, last, snapshot.lastPosition(), segments.size(), deleted, floor);
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
