package io.sluice.broker.raft;

import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.LifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * What the broker's Ratis state machines share (the partitions' and the control group's): each is a thin adapter that
 * hands every committed entry to a plain replicated state ({@link #apply}), keeps Ratis's applied term and index, lets
 * a proposer wait until this replica applied an index ({@link #awaitApplied}), loads the state from the latest snapshot
 * at start ({@link #load}), takes a snapshot of what it applied ({@link #saveSnapshot}), and goes through Ratis's
 * PAUSED lifecycle when a snapshot installed from the leader replaces its state.
 * <p>
 * Thread-safety: Ratis applies entries and takes snapshots on one thread; the waits and getters are safe from any
 * thread.
 */
public abstract class ReplicatedStateAdapter extends BaseStateMachine
{
    private static final Logger LOG = LoggerFactory.getLogger(ReplicatedStateAdapter.class);

    private final AppliedIndexWaiters appliedWaiters = new AppliedIndexWaiters(this::lastAppliedIndex);
    private volatile LogFailureHandler logFailureHandler = (cause, index) -> { };

    /** What happens when a write of this replica's Raft log failed ({@link FailedLogRecovery}). */
    @FunctionalInterface
    public interface LogFailureHandler
    {
        /** Called on Ratis's log thread: hand the work to another thread. {@code index} is -1 when unknown. */
        void onLogFailed(Throwable cause, long index);
    }

    /**
     * Applies the committed entry at {@code index}, whose bytes are {@code data} (the state copies what it keeps and
     * holds no reference once this returns); returns the reply for its proposer, null or empty for none.
     */
    protected abstract byte[] apply(long index, ByteString data) throws Exception;

    /** The replica, for the logs: "partition 3 on broker 1". */
    protected abstract String replicaName();

    @Override
    public final CompletableFuture<Message> applyTransaction(final TransactionContext trx)
    {
        final LogEntryProto entry = trx.getLogEntry();
        final long index = entry.getIndex();
        try
        {
            final byte[] reply = apply(index, entry.getStateMachineLogEntry().getLogData());
            return CompletableFuture.completedFuture(reply == null || reply.length == 0 ?
                Message.EMPTY : Message.valueOf(UnsafeByteOperations.unsafeWrap(reply)));
        }
        catch (final Exception e)
        {
            LOG.error("{}: failed to apply entry {}", replicaName(), index, e);
            return CompletableFuture.failedFuture(e);
        }
        finally
        {
            updateLastAppliedTermIndex(entry.getTerm(), index);
            appliedWaiters.applied(index);
        }
    }

    @Override
    public void notifyTermIndexUpdated(final long term, final long index)
    {
        super.notifyTermIndexUpdated(term, index);
        appliedWaiters.applied(index);
    }

    /** Sets what a failed write of this replica's Raft log does; before the Raft server starts. */
    public void onLogFailure(final LogFailureHandler handler)
    {
        this.logFailureHandler = handler;
    }

    @Override
    public void notifyLogFailed(final Throwable cause, final LogEntryProto failedEntry)
    {
        logFailureHandler.onLogFailed(cause, failedEntry == null ? -1 : failedEntry.getIndex());
    }

    /** Completes once this replica has applied the entry at {@code index}. */
    public CompletableFuture<Void> awaitApplied(final long index)
    {
        return appliedWaiters.await(index);
    }

    public long lastAppliedIndex()
    {
        final TermIndex applied = getLastAppliedTermIndex();
        return applied == null ? RaftLog.INVALID_LOG_INDEX : applied.getIndex();
    }

    /** Opens the snapshots' storage in the group's state machine directory. */
    protected abstract void initStorage(RaftStorage raftStorage) throws IOException;

    /** Replaces the state with the latest snapshot's on disk (none: the empty state) and its applied term and index. */
    protected abstract void load() throws IOException;

    /** Writes a snapshot of the state, which has applied everything up to {@code last}. */
    protected abstract void saveSnapshot(TermIndex last) throws IOException;

    @Override
    public final void initialize(final RaftServer server, final RaftGroupId groupId, final RaftStorage raftStorage)
        throws IOException
    {
        super.initialize(server, groupId, raftStorage);
        initStorage(raftStorage);
        // Initialized again: Ratis built a new division over this machine because its group was reopened
        // (FailedLogRecovery). It starts over as after a restart, from its latest snapshot and the log on disk.
        final boolean reopened = getLifeCycle().getCurrentState() != LifeCycle.State.NEW;
        if (reopened)
        {
            enterPaused();
            setLastAppliedTermIndex(TermIndex.INITIAL_VALUE);
        }
        getLifeCycle().startAndTransition(this::load);
        if (reopened)
        {
            LOG.info("{}: reopened from its latest snapshot and its Raft log on disk (applied up to {})", replicaName(),
                lastAppliedIndex());
            onReopened();
        }
    }

    /** The group was reopened and this state loaded again; the owner catches up from here. */
    protected void onReopened()
    {
    }

    @Override
    public final long takeSnapshot() throws IOException
    {
        final TermIndex last = getLastAppliedTermIndex();
        if (last == null || last.getIndex() <= 0)
        {
            return RaftLog.INVALID_LOG_INDEX;
        }
        saveSnapshot(last);
        return last.getIndex();
    }

    /** A snapshot from the leader is about to replace the state: Ratis reloads only a PAUSED machine. */
    protected final void enterPaused()
    {
        getLifeCycle().transitionIfValid(LifeCycle.State.PAUSING);
        getLifeCycle().transitionIfValid(LifeCycle.State.PAUSED);
    }

    /** Reloads the state from the installed snapshot ({@link #load}) and runs again. */
    protected final void reload() throws IOException
    {
        getLifeCycle().transitionIfValid(LifeCycle.State.STARTING);
        load();
        getLifeCycle().transitionIfValid(LifeCycle.State.RUNNING);
    }
}
