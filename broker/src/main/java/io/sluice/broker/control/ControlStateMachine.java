package io.sluice.broker.control;

import io.sluice.broker.raft.ReplicatedStateAdapter;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotRetentionPolicy;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.MD5FileUtil;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The Ratis state machine of the cluster control group: a thin adapter over the replicated {@link ControlState}. It
 * hands committed entries to the state, keeps Ratis's term and index bookkeeping and the waiters on an applied index,
 * and takes and loads snapshots: one {@link ControlSnapshot} file in the group's {@code sm/} directory, named and
 * checksummed as Ratis's {@link SimpleStateMachineStorage} wants, so a replica whose log was purged installs it from
 * the leader.
 * <p>
 * Thread-safety: Ratis applies entries and takes snapshots on one thread; getters are safe from any thread.
 */
public final class ControlStateMachine extends ReplicatedStateAdapter
{
    /**
     * Told around the state being replaced (it may move by much): by a snapshot installed from the leader, or by the
     * group reopened after its log failed ({@code FailedLogRecovery}; the division closes, then loads again).
     */
    public interface ReloadListener
    {
        /** Before the state is replaced: what it holds is about to go. */
        void onReloading();

        /** After: the new state is in place. */
        void onReloaded();
    }

    private static final Logger LOG = LoggerFactory.getLogger(ControlStateMachine.class);
    private static final SnapshotRetentionPolicy KEEP_TWO = new SnapshotRetentionPolicy()
    {
        @Override
        public int getNumSnapshotsRetained()
        {
            return 2;
        }
    };

    private final int brokerId;
    private final ControlState state;
    private final ReloadListener reloadListener;
    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();

    public ControlStateMachine(final int brokerId, final ControlState state, final ReloadListener reloadListener)
    {
        this.brokerId = brokerId;
        this.state = state;
        this.reloadListener = reloadListener;
    }

    public ControlState state()
    {
        return state;
    }

    @Override
    protected void initStorage(final RaftStorage raftStorage) throws IOException
    {
        storage.init(raftStorage);
    }

    @Override
    public void pause()
    {
        // A snapshot from the leader is about to replace the directory; Ratis reloads only a PAUSED machine.
        reloadListener.onReloading();
        enterPaused();
    }

    @Override
    public void close() throws IOException
    {
        // At a stop, or when the group is closed to be reopened: until it catches up again, exporting holds.
        reloadListener.onReloading();
        super.close();
    }

    @Override
    protected void onReopened()
    {
        reloadListener.onReloaded();
    }

    @Override
    public void reinitialize() throws IOException
    {
        reload();
        LOG.info("broker {}: control group state reloaded from installed snapshot {}", brokerId, storage.getLatestSnapshot());
        reloadListener.onReloaded();
    }

    @Override
    protected void load() throws IOException
    {
        final SingleFileSnapshotInfo latest = storage.loadLatestSnapshot();
        if (latest == null)
        {
            state.restore(null);
            return;
        }
        state.restore(ControlSnapshot.readFrom(latest.getFile().getPath()));
        setLastAppliedTermIndex(latest.getTermIndex());
    }

    @Override
    protected byte[] apply(final long index, final ByteString data) throws IOException
    {
        final ByteBuffer view = data.asReadOnlyByteBuffer();
        // The reply is the proposer's answer (a claim's outcome); Ratis hands it back with the commit's.
        return state.apply(index, new UnsafeBuffer(view, view.position(), view.remaining()));
    }

    @Override
    protected String replicaName()
    {
        return "the control group on broker " + brokerId;
    }

    @Override
    protected void saveSnapshot(final TermIndex last) throws IOException
    {
        final File file = storage.getSnapshotFile(last.getTerm(), last.getIndex());
        state.snapshot().writeTo(file.toPath());
        final var md5 = MD5FileUtil.computeAndSaveMd5ForFile(file);
        storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file.toPath(), md5), last));
        storage.cleanupOldSnapshots(KEEP_TWO);
        LOG.info("broker {}: control group snapshot at {}", brokerId, last);
    }

    @Override
    public StateMachineStorage getStateMachineStorage()
    {
        return storage;
    }
}
