package io.sluice.broker.partition;

import io.sluice.broker.leadership.FollowerSync;
import io.sluice.broker.leadership.LeadershipTransfer;
import io.sluice.broker.leadership.LocalWrites;
import io.sluice.broker.leadership.Replica;
import io.sluice.broker.leadership.RebalanceOutcome;
import io.sluice.broker.errors.PartitionErrors;
import io.sluice.broker.exporting.ExporterDirector;
import io.sluice.broker.exporting.ExportingStates;
import io.sluice.broker.exporting.ExportingView;
import io.sluice.broker.exporting.UnavailableRange;
import io.sluice.broker.errors.PartitionException;
import io.sluice.broker.append.AppendBatcher;
import io.sluice.broker.append.AppendEntries;
import io.sluice.broker.append.AppendOutcomes;
import io.sluice.broker.append.AppendPositions;
import io.sluice.broker.backfill.BackfillEntry;
import io.sluice.broker.backfill.BackfillRunnerConfig;
import io.sluice.broker.backfill.PartitionBackfills;
import io.sluice.broker.backfill.RecordLogBackfillSource;
import io.sluice.broker.backfill.SpiBackfillExporterFactory;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.ExporterRegistry;
import io.sluice.broker.raft.GroupMember;
import io.sluice.broker.raft.RaftPeers;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One partition replica on this broker: its Raft group's member, state machine and exporter director, and the
 * operations the command and admin API run on it. What those operations decide lives beside it: {@link LocalWrites}
 * (every proposal and the hold on them), {@link LeadershipTransfer} (transfers, the stuck step-down guard),
 * {@link FollowerSync} (whom a leadership can go to) and {@link StateEntries} (the entries it proposes besides
 * records). Its exporting state is the cluster control group's ({@link ExportingView}); pauses and resumes are the
 * control group's too. Thread-safe.
 * <p>
 * Why a little over 450 lines: it composes the replica's parts (Raft member, state machine, append path, exporting,
 * leadership, backfills) and is the one entry point the command API and the broker call; each part's logic lives in
 * its own package.
 */
public final class Partition implements PartitionListener, Replica, AutoCloseable
{
    private final int brokerId;
    private final int partitionId;
    private final int preferredBrokerId;
    private final GroupMember member;
    private final PartitionErrors errors;
    private final PartitionStateMachine stateMachine;
    /** The replicated state the state machine applies to (the same object for the replica's whole life). */
    private final PartitionState state;
    private final ExportingView exporting;
    private final ExporterDirector director;
    private final PartitionBackfills backfills;
    private final AppendBatcher batcher;
    private final FollowerSync followers;
    private final LeadershipTransfer transfers;
    private final LocalWrites writes;
    /** Set once the broker stops: exporters stay stopped and nothing takes the leadership back here. */
    private volatile boolean stopping;
    /** Where work a Ratis callback must not wait for runs (the exporters' scheduler). */
    private final ScheduledExecutorService exporterScheduler;

    public Partition(
        final int brokerId,
        final int partitionId,
        final RaftGroup group,
        final Map<String, ExporterConfig> exporters,
        final ExporterRegistry registry,
        final Path dataDir,
        final ScheduledExecutorService exporterScheduler,
        final long segmentSizeBytes,
        final Duration ackInterval,
        final ExportingStates exportingStates,
        final RaftProperties clientProperties,
        final Parameters clientParameters,
        final BackfillRunnerConfig backfillConfig,
        final int preferredBrokerId)
    {
        this.brokerId = brokerId;
        this.partitionId = partitionId;
        this.preferredBrokerId = preferredBrokerId;
        this.errors = new PartitionErrors(partitionId, brokerId);
        this.member = new GroupMember(errors.replica(), brokerId, group, clientProperties, clientParameters,
            RetryPolicies.retryForeverWithSleep(TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)), errors);
        this.batcher = new AppendBatcher(partitionId, this::appendEntry, System::currentTimeMillis);
        this.stateMachine = new PartitionStateMachine(brokerId, partitionId, exporters.keySet(), segmentSizeBytes, this);
        this.state = stateMachine.state();
        this.exporting = new ExportingView(partitionId, exportingStates, state.exportGate());
        this.director = new ExporterDirector(brokerId, partitionId, state, exporting, exporters, registry, dataDir,
            exporterScheduler, this::submitExporterPositions, ackInterval.toMillis(), member::leaderTerm);
        this.exporterScheduler = exporterScheduler;
        this.backfills = new PartitionBackfills(brokerId, partitionId, state,
            new RecordLogBackfillSource(partitionId, state::recordLog),
            new SpiBackfillExporterFactory(brokerId, dataDir, exporters, registry),
            this::replicateBackfill,
            exporting.backfillSwitch(),
            () -> exporting.state() == ExportingState.PAUSED,
            backfillConfig,
            Clock.systemUTC());
        stateMachine.backfills(backfills);
        stateMachine.restoreFrom(dataDir.resolve("broker-" + brokerId)
            .resolve(io.sluice.protocol.backup.PartitionFiles.restoreDirectory(partitionId)));
        this.followers = new FollowerSync(this);
        this.transfers = new LeadershipTransfer(this, followers);
        this.writes = new LocalWrites(member, errors, () -> stopping, transfers::noteWriteOutcome);
    }

    public static RaftGroupId groupId(final int partitionId)
    {
        return RaftPeers.groupId("sluice-partition-" + partitionId);
    }

    public void attach(final RaftServer server)
    {
        member.attach(server);
    }

    @Override
    public int partitionId()
    {
        return partitionId;
    }

    @Override
    public int brokerId()
    {
        return brokerId;
    }

    public RaftGroup group()
    {
        return member.group();
    }

    /** This replica's member of the partition's Raft group. */
    @Override
    public GroupMember member()
    {
        return member;
    }

    @Override
    public LocalWrites writes()
    {
        return writes;
    }

    public PartitionStateMachine stateMachine()
    {
        return stateMachine;
    }

    /** The partition's replicated state on this replica (what the state machine applies to). */
    public PartitionState state()
    {
        return state;
    }

    /** The partition's exporting state as its exporters on this broker obey it. */
    public ExportingView exporting()
    {
        return exporting;
    }

    public ExporterDirector director()
    {
        return director;
    }

    public PartitionBackfills backfills()
    {
        return backfills;
    }

    /** How in sync this leader's followers are: whom its leadership can be handed to. */
    public FollowerSync followers()
    {
        return followers;
    }

    @Override
    public boolean isStopping()
    {
        return stopping;
    }

    @Override
    public void stopExporting()
    {
        director.stop();
        backfills.onLeadershipLost();
    }

    @Override
    public void resumeExporting()
    {
        onLeaderReady(partitionId);
    }

    @Override
    public PartitionException notLeaderError()
    {
        final RaftServer.Division division = member.openDivision();
        if (division == null)
        {
            return errors.unavailable("not started");
        }
        final DivisionInfo info = division.getInfo();
        return info.isLeader() ? null : errors.notLeader(RaftPeers.brokerIdOf(info.getLeaderId()));
    }

    public boolean isLeader()
    {
        return member.isLeader();
    }

    /** The broker this replica believes leads the partition, or -1. */
    public int knownLeaderId()
    {
        return member.knownLeaderId();
    }

    @Override
    public int preferredBrokerId()
    {
        return preferredBrokerId;
    }

    // ------------------------------------------------------------------------------------------- leadership

    @Override
    public void onLeaderReady(final int partitionId)
    {
        final RaftServer.Division division = member.openDivision();
        if (division == null)
        {
            return;
        }
        final long term = division.getInfo().getCurrentTerm();
        final long commitIndex = division.getRaftLog().getLastCommittedIndex();
        // Everything committed before this term must be applied first, so a committed pause is seen.
        // Starting may wait for a director run still ending, so it happens on the exporter scheduler, not here.
        stateMachine.awaitApplied(commitIndex).thenRunAsync(() ->
        {
            final DivisionInfo info = division.getInfo();
            if (!member.isClosed() && !stopping && !transfers.isRunning() && info.isLeader() &&
                info.getCurrentTerm() == term)
            {
                director.start(term);
                backfills.onBecomeLeader();
            }
        }, exporterScheduler);
    }

    /**
     * Starts the exporters of a ready leader whose leader-ready notification was missed, and steps down a leader
     * Ratis left "stepping down" ({@link LeadershipTransfer#clearStuckStepDown}).
     */
    public void checkLeadership()
    {
        final RaftServer.Division division = member.openDivision();
        if (division == null || stopping || transfers.isRunning())
        {
            return;
        }
        final DivisionInfo info = division.getInfo();
        if (info.isLeader() && info.isLeaderReady() && !director.isActive())
        {
            onLeaderReady(partitionId);
        }
        transfers.clearStuckStepDown(division);
    }

    @Override
    public void onLeaderChanged(final int partitionId, final RaftPeerId newLeaderId)
    {
        transfers.onLeaderChanged();
        writes.wakeHeld();
        if (newLeaderId == null || !newLeaderId.equals(member.selfId()))
        {
            // On a Ratis thread: neither waits for an export in flight.
            director.stopUnlessLeading();
            backfills.onLeadershipLost();
        }
    }

    @Override
    public void onRecordsApplied(final int partitionId, final long lastPosition)
    {
        director.wakeUp();
    }

    /** The control group applied a new exporting state for this partition, or its replica caught up: export at once. */
    public void onExportingStateChanged()
    {
        director.wakeUp();
    }

    /**
     * Hands this replica's leadership to {@code targetBrokerId}, waiting at most {@code timeout}; completes with the
     * leader after the transfer. See {@link LeadershipTransfer#transferLeadership}.
     */
    public CompletableFuture<Integer> transferLeadership(final int targetBrokerId, final Duration timeout)
    {
        return transfers.transferLeadership(targetBrokerId, timeout);
    }

    /**
     * One attempt of a transfer tried again within a bound with {@code remainingNanos} left: at most
     * {@link LeadershipTransfer#ATTEMPT}. See {@link LeadershipTransfer#attempt}.
     */
    public CompletableFuture<Integer> transferAttempt(final int targetBrokerId, final long remainingNanos)
    {
        return transfers.attempt(targetBrokerId, remainingNanos);
    }

    /**
     * Moves the leadership to the preferred broker when it is in sync; completes with where it is afterwards. See
     * {@link LeadershipTransfer#rebalance}.
     */
    public CompletableFuture<RebalanceOutcome> rebalance(final Duration timeout)
    {
        return transfers.rebalance(timeout);
    }

    public boolean isTransferring()
    {
        return transfers.isRunning();
    }

    /**
     * Marks this replica as stopping: its exporters and backfills stop now and stay stopped, so a leadership
     * handed over next never overlaps with exporting here.
     */
    public void prepareToStop()
    {
        stopping = true;
        // Writes arriving now would only make the followers lag behind the handover; clients retry them on the
        // next leader.
        writes.hold(true);
        director.stop();
        backfills.onLeadershipLost();
    }

    // ------------------------------------------------------------------------------------------- commands

    /**
     * Appends a batch of records on the local leader, coalesced with concurrent appends into few entries; completes
     * with the records' positions once committed by a quorum and applied here. A batch under an idempotency id
     * that the partition remembers appends nothing again and completes with the positions it was first given; with
     * another request digest it fails with CONFLICT. Fails with {@link PartitionException} (NOT_LEADER with the
     * known leader, UNAVAILABLE).
     *
     * @param batch the records and their id encoded by {@link AppendEntries#newBatch}; the partition's from now on.
     */
    public CompletableFuture<AppendPositions> append(final byte[] batch)
    {
        final RaftServer.Division division = member.division();
        if (division != null && !division.getInfo().isLeader() && !transfers.isRunning())
        {
            return CompletableFuture.failedFuture(errors.notLeader(RaftPeers.brokerIdOf(division.getInfo().getLeaderId())));
        }
        // A running transfer or a new leader not ready yet makes the proposal wait (LocalWrites), not fail.
        return batcher.append(batch);
    }

    private CompletableFuture<AppendOutcomes> appendEntry(final ByteString entry)
    {
        return proposeOnLeader(Message.valueOf(entry)).thenApply((reply) ->
        {
            final AppendOutcomes result = PartitionStateMachine.decodeAppendResult(reply.getMessage());
            if (result == null)
            {
                throw new PartitionException(ErrorCode.INTERNAL_ERROR, partitionId, -1,
                    errors.replica() + ": append entry " + reply.getLogIndex() + " gave no positions");
            }
            return result;
        });
    }

    /** Proposes a backfill entry on the local leader; completes once applied here. */
    private CompletableFuture<Void> replicateBackfill(final BackfillEntry entry)
    {
        return proposeOnLeader(StateEntries.backfill(entry))
            .thenCompose((reply) -> stateMachine.awaitApplied(reply.getLogIndex()));
    }

    /** Proposes on this replica while it leads; completes with the successful reply, fails with a refusal's error. */
    private CompletableFuture<RaftClientReply> proposeOnLeader(final Message message)
    {
        final PartitionException notLeader = notLeaderError();
        if (notLeader != null)
        {
            return CompletableFuture.failedFuture(notLeader);
        }
        return writes.submit(message).thenApply((reply) ->
        {
            if (!reply.isSuccess())
            {
                throw member.refusal(reply);
            }
            return reply;
        });
    }

    private CompletableFuture<Object> submitExporterPositions(
        final Map<String, Long> positions, final Map<String, UnavailableRange> unavailable)
    {
        if (member.leaderTerm() < 0)
        {
            return CompletableFuture.completedFuture(null);
        }
        return writes.submit(StateEntries.exporterPositions(positions, unavailable)).thenApply((r) -> r);
    }

    /**
     * Asks this replica to take a snapshot now, whatever the entries since its last: a snapshot compacts the record log
     * below what every exporter acknowledged, which a disk past its watermark cannot wait for.
     */
    public CompletableFuture<RaftClientReply> snapshotNow(final long timeoutMs)
    {
        return member.snapshotNow(timeoutMs);
    }

    /**
     * Captures this leader's state for a backup: takes a snapshot now (Ratis keeps the latest when nothing was applied
     * since) and links its files into {@code staging}; the capture holds every record this leader acknowledged before.
     */
    public CompletableFuture<PartitionStateMachine.CapturedSnapshot> captureForBackup(
        final java.nio.file.Path staging, final long timeoutMs)
    {
        final PartitionException notLeader = notLeaderError();
        if (notLeader != null)
        {
            return CompletableFuture.failedFuture(notLeader);
        }
        return snapshotNow(timeoutMs).thenApply((reply) ->
        {
            if (!reply.isSuccess())
            {
                throw new java.util.concurrent.CompletionException(new java.io.IOException(errors.replica() +
                    ": the snapshot for the backup failed: " + reply.getException()));
            }
            try
            {
                final PartitionStateMachine.CapturedSnapshot captured = stateMachine.captureLatestSnapshot(staging);
                if (captured == null)
                {
                    throw new java.io.IOException(errors.replica() + ": no snapshot to back up");
                }
                return captured;
            }
            catch (final java.io.IOException e)
            {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
    }

    // ------------------------------------------------------------------------------------------- status

    public PartitionStatus status()
    {
        final RaftServer.Division division = member.division();
        PartitionRole role = PartitionRole.INACTIVE;
        long term = 0;
        int leaderId = -1;
        if (division != null)
        {
            final DivisionInfo info = division.getInfo();
            // No role yet while Ratis starts the division (a replica reopened after its log failed, for one).
            final RaftProtos.RaftPeerRole current = info.getCurrentRole();
            role = current == null ? PartitionRole.INACTIVE : switch (current)
            {
                case LEADER -> PartitionRole.LEADER;
                case FOLLOWER -> PartitionRole.FOLLOWER;
                case CANDIDATE -> PartitionRole.CANDIDATE;
                default -> PartitionRole.INACTIVE;
            };
            term = info.getCurrentTerm();
            leaderId = RaftPeers.brokerIdOf(info.getLeaderId());
        }
        final Map<String, Long> positions = new LinkedHashMap<>();
        state.exporterIds().stream().sorted()
            .forEach((id) -> positions.put(id, state.exporterPosition(id)));
        return new PartitionStatus(partitionId, role, term, leaderId, exporting.heldState(),
            exporting.version(), state.lastPosition(), state.exportedPosition(),
            positions, state.firstPosition(), exporting.hold(), director.sentPosition());
    }

    @Override
    public void close()
    {
        member.close();
        writes.wakeHeld();
        director.stop();
        backfills.close();
    }
}
