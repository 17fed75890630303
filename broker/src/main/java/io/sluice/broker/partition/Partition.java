package io.sluice.broker.partition;

import io.sluice.broker.backfill.BackfillEntry;
import io.sluice.broker.backfill.BackfillRunnerConfig;
import io.sluice.broker.backfill.PartitionBackfills;
import io.sluice.broker.backfill.RecordLogBackfillSource;
import io.sluice.broker.backfill.SpiBackfillExporterFactory;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.ExporterRegistry;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One partition replica on this broker: its Raft group's division, state machine, exporter director and Raft client,
 * and the operations the command and admin API run on it, over Ratis. What those operations decide lives beside it:
 * {@link LeadershipTransfer} (transfers, the write hold, the stuck step-down guard), {@link FollowerSync} (whom a
 * leadership can go to) and {@link StateEntries} (the entries it proposes besides records). Its exporting state is the
 * cluster control group's ({@link ExportingView}); pauses and resumes are the control group's too. Thread-safe.
 */
public final class Partition implements PartitionListener, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Partition.class);
    private static final String PEER_PREFIX = "broker-";
    /** How long an append waits for a new leader to become ready before the leader-not-ready answer. */
    private static final long LEADER_READY_WAIT_MS = 1_000;
    /**
     * How long a proposal held by a leadership transfer or a stopping broker waits for it: a transfer to an in-sync
     * replica ends in well under a second, an attempt at {@link LeadershipTransfer#ATTEMPT}; callers' deadlines
     * bound it further.
     */
    static final Duration HELD_WRITE_WAIT = Duration.ofSeconds(3);
    private static final long LEADER_READY_POLL_MS = 5;

    private final int brokerId;
    private final int partitionId;
    private final int preferredBrokerId;
    private final RaftGroup group;
    private final RaftPeerId selfId;
    private final PartitionStateMachine stateMachine;
    /** The replicated state the state machine applies to (the same object for the replica's whole life). */
    private final PartitionState state;
    private final ExportingView exporting;
    private final ExporterDirector director;
    private final PartitionBackfills backfills;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final AppendBatcher batcher;
    private final FollowerSync followers;
    private final LeadershipTransfer transfers;
    private volatile RaftServer server;
    private volatile RaftServer.Division cachedDivision;
    private final GroupClient client;
    private volatile boolean closed;
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
        this.group = group;
        this.selfId = peerId(brokerId);
        this.batcher = new AppendBatcher(partitionId, this::appendEntry, System::currentTimeMillis);
        this.client = new GroupClient("partition " + partitionId + " on broker " + brokerId, group, clientProperties,
            clientParameters, RetryPolicies.retryForeverWithSleep(TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)),
            this::division);
        this.stateMachine = new PartitionStateMachine(brokerId, partitionId, exporters.keySet(), segmentSizeBytes, this);
        this.state = stateMachine.state();
        this.exporting = new ExportingView(partitionId, exportingStates, state.exportGate());
        this.director = new ExporterDirector(brokerId, partitionId, state, exporting, exporters, registry, dataDir,
            exporterScheduler, this::submitExporterPositions, ackInterval.toMillis(), this::leaderTerm);
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
        this.followers = new FollowerSync(this);
        this.transfers = new LeadershipTransfer(this, followers);
    }

    public static RaftGroupId groupId(final int partitionId)
    {
        return RaftGroupId.valueOf(
            UUID.nameUUIDFromBytes(("sluice-partition-" + partitionId).getBytes(StandardCharsets.UTF_8)));
    }

    public static RaftPeerId peerId(final int brokerId)
    {
        return RaftPeerId.valueOf(PEER_PREFIX + brokerId);
    }

    /** Broker id of a peer id, or -1 when it is null or not a broker's. */
    public static int brokerIdOf(final RaftPeerId peerId)
    {
        if (peerId == null)
        {
            return -1;
        }
        final String id = peerId.toString();
        if (!id.startsWith(PEER_PREFIX))
        {
            return -1;
        }
        try
        {
            return Integer.parseInt(id.substring(PEER_PREFIX.length()));
        }
        catch (final NumberFormatException e)
        {
            return -1;
        }
    }

    /** The current term while this replica leads, else -1 (what the director checks its run against). */
    private long leaderTerm()
    {
        final RaftServer.Division division = division();
        if (division == null)
        {
            return -1;
        }
        final DivisionInfo info = division.getInfo();
        return info.isLeader() ? info.getCurrentTerm() : -1;
    }

    public void attach(final RaftServer server)
    {
        this.server = server;
        this.cachedDivision = null;
    }

    public int partitionId()
    {
        return partitionId;
    }

    int brokerId()
    {
        return brokerId;
    }

    public RaftGroup group()
    {
        return group;
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

    boolean isClosed()
    {
        return closed;
    }

    boolean isStopping()
    {
        return stopping;
    }

    /** NOT_LEADER (with the known leader) when this replica does not lead the partition now, else null. */
    public PartitionException notLeaderError()
    {
        final RaftServer.Division division = openDivision();
        if (division == null)
        {
            return unavailable("not started");
        }
        final DivisionInfo info = division.getInfo();
        return info.isLeader() ? null : notLeader(brokerIdOf(info.getLeaderId()));
    }

    public boolean isLeader()
    {
        final RaftServer.Division division = openDivision();
        return division != null && division.getInfo().isLeader();
    }

    /** The broker this replica believes leads the partition, or -1. */
    public int knownLeaderId()
    {
        final RaftServer.Division division = division();
        return division == null ? -1 : brokerIdOf(division.getInfo().getLeaderId());
    }

    /** The broker that should lead this partition when it can: the first of the partition's placement. */
    public int preferredBrokerId()
    {
        return preferredBrokerId;
    }

    /** The group's division while this replica is not closed, else null. */
    RaftServer.Division openDivision()
    {
        final RaftServer.Division division = division();
        return closed ? null : division;
    }

    /**
     * The group's division on this broker, looked up once: the exporter checks leadership on every run, and
     * Ratis's lookup goes through a future per call. Null until the server has the group.
     */
    RaftServer.Division division()
    {
        final RaftServer.Division cached = cachedDivision;
        if (cached != null)
        {
            return cached;
        }
        final RaftServer server = this.server;
        if (server == null)
        {
            return null;
        }
        try
        {
            final RaftServer.Division found = server.getDivision(group.getGroupId());
            cachedDivision = found;
            return found;
        }
        catch (final Exception e)
        {
            return null;
        }
    }

    // ------------------------------------------------------------------------------------------- leadership

    @Override
    public void onLeaderReady(final int partitionId)
    {
        final RaftServer.Division division = openDivision();
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
            if (!closed && !stopping && !transfers.isRunning() && info.isLeader() && info.getCurrentTerm() == term)
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
        final RaftServer.Division division = openDivision();
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
        if (newLeaderId == null || !newLeaderId.equals(selfId))
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
        transfers.holdWritesForStop();
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
        final RaftServer.Division division = division();
        if (division != null && !division.getInfo().isLeader() && !transfers.isRunning())
        {
            return CompletableFuture.failedFuture(notLeader(brokerIdOf(division.getInfo().getLeaderId())));
        }
        // A running transfer or a new leader not ready yet makes the proposal wait (submitLocal), not fail.
        return batcher.append(batch);
    }

    /** Completes once this replica is a ready leader, is no longer leader, or the deadline passed. */
    private static CompletableFuture<Void> whenLeaderReady(final RaftServer.Division division, final long deadlineNanos)
    {
        final DivisionInfo info = division.getInfo();
        if (!info.isLeader() || info.isLeaderReady() || System.nanoTime() - deadlineNanos >= 0)
        {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.runAsync(() -> { },
                CompletableFuture.delayedExecutor(LEADER_READY_POLL_MS, TimeUnit.MILLISECONDS))
            .thenCompose((ignored) -> whenLeaderReady(division, deadlineNanos));
    }

    private CompletableFuture<AppendOutcomes> appendEntry(final ByteString entry)
    {
        final PartitionException notLeader = notLeaderError();
        if (notLeader != null)
        {
            return CompletableFuture.failedFuture(notLeader);
        }
        return submitLocal(Message.valueOf(entry)).thenApply((reply) ->
        {
            if (!reply.isSuccess())
            {
                throw toPartitionException(reply);
            }
            final AppendOutcomes result = PartitionStateMachine.decodeAppendResult(reply.getMessage());
            if (result == null)
            {
                throw new PartitionException(ErrorCode.INTERNAL_ERROR, partitionId, -1,
                    "partition " + partitionId + " on broker " + brokerId + ": append entry " + reply.getLogIndex() +
                    " gave no positions");
            }
            return result;
        });
    }

    /** Proposes a backfill entry on the local leader; completes once applied here. */
    private CompletableFuture<Void> replicateBackfill(final BackfillEntry entry)
    {
        final PartitionException notLeader = notLeaderError();
        if (notLeader != null)
        {
            return CompletableFuture.failedFuture(notLeader);
        }
        return submitLocal(StateEntries.backfill(entry)).thenCompose((reply) ->
        {
            if (!reply.isSuccess())
            {
                throw toPartitionException(reply);
            }
            return stateMachine.awaitApplied(reply.getLogIndex());
        });
    }

    private CompletableFuture<Object> submitExporterPositions(
        final Map<String, Long> positions, final Map<String, UnavailableRange> unavailable)
    {
        if (leaderTerm() < 0)
        {
            return CompletableFuture.completedFuture(null);
        }
        return submitLocal(StateEntries.exporterPositions(positions, unavailable)).thenApply((r) -> r);
    }

    // ------------------------------------------------------------------------------------------- Ratis

    /**
     * Proposes an entry to this replica's Raft server in process. While local writes are held ({@link
     * LeadershipTransfer}: a transfer starting, the broker stopping) the proposal waits for the hold to end, at most
     * {@link #HELD_WRITE_WAIT}: it is then proposed here if this replica still leads, or fails NOT_LEADER naming the
     * new leader, so the sender goes there at once. A new leader not ready yet is waited for the same way. Only a
     * hold outliving the wait fails UNAVAILABLE.
     */
    CompletableFuture<RaftClientReply> submitLocal(final Message message)
    {
        return submitLocal(message, System.nanoTime() + HELD_WRITE_WAIT.toNanos());
    }

    private CompletableFuture<RaftClientReply> submitLocal(final Message message, final long deadlineNanos)
    {
        final CompletableFuture<Void> holdChanged = transfers.holdChanged();
        if (!transfers.admitLocalWrite())
        {
            final long leftNanos = deadlineNanos - System.nanoTime();
            if (closed || leftNanos <= 0)
            {
                return CompletableFuture.failedFuture(unavailable(stopping ?
                    "broker " + brokerId + " is stopping and hands its leaderships over" :
                    "a leadership transfer is running"));
            }
            return holdChanged.copy().completeOnTimeout(null, leftNanos, TimeUnit.NANOSECONDS)
                .thenCompose((ignored) -> afterHold(message, deadlineNanos));
        }
        final RaftServer.Division division = division();
        if (division != null && division.getInfo().isLeader() && !division.getInfo().isLeaderReady())
        {
            // A new leader refuses writes until its first entry commits: wait for that briefly rather than refuse.
            transfers.localWriteEnded(null);
            return whenLeaderReady(division, Math.min(deadlineNanos,
                    System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LEADER_READY_WAIT_MS)))
                .thenCompose((ignored) -> proposeLocal(message));
        }
        return proposeAdmitted(message);
    }

    /** The hold ended, the leader changed, or the wait is over: propose here while leading, else name the leader. */
    private CompletableFuture<RaftClientReply> afterHold(final Message message, final long deadlineNanos)
    {
        final RaftServer.Division division = division();
        if (division != null && division.getInfo().isLeader())
        {
            return submitLocal(message, deadlineNanos);
        }
        return newLeaderKnown(deadlineNanos).thenApply((leader) ->
        {
            throw notLeader(leader);
        });
    }

    /**
     * The leader once one other than this replica is known (a handover's election takes a moment to be heard of), or
     * -1 at the deadline.
     */
    private CompletableFuture<Integer> newLeaderKnown(final long deadlineNanos)
    {
        final RaftServer.Division division = division();
        final int leader = division == null ? -1 : brokerIdOf(division.getInfo().getLeaderId());
        if ((leader >= 0 && leader != brokerId) || closed || System.nanoTime() - deadlineNanos >= 0)
        {
            return CompletableFuture.completedFuture(leader == brokerId ? -1 : leader);
        }
        return CompletableFuture.runAsync(() -> { },
                CompletableFuture.delayedExecutor(LEADER_READY_POLL_MS, TimeUnit.MILLISECONDS))
            .thenCompose((ignored) -> newLeaderKnown(deadlineNanos));
    }

    /** Proposes without waiting again: a write that waited for a ready leader is not held a second time. */
    private CompletableFuture<RaftClientReply> proposeLocal(final Message message)
    {
        if (!transfers.admitLocalWrite())
        {
            return submitLocal(message);
        }
        return proposeAdmitted(message);
    }

    /** Proposes a write {@link LeadershipTransfer#admitLocalWrite admitted} before. */
    private CompletableFuture<RaftClientReply> proposeAdmitted(final Message message)
    {
        final RaftClientRequest request = RaftClientRequest.newBuilder()
            .setClientId(clientId)
            .setServerId(selfId)
            .setGroupId(group.getGroupId())
            .setCallId(callIds.incrementAndGet())
            .setMessage(message)
            .setType(RaftClientRequest.writeRequestType())
            .build();
        try
        {
            return server.submitClientRequestAsync(request)
                .whenComplete((reply, error) -> transfers.localWriteEnded(reply));
        }
        catch (final Exception e)
        {
            transfers.localWriteEnded(null);
            return CompletableFuture.failedFuture(unavailable(e.toString()));
        }
    }

    /** Sends an entry to the group's leader through this replica's Raft client. */
    CompletableFuture<RaftClientReply> submitThroughClient(final Message message)
    {
        try
        {
            return client().async().send(message);
        }
        catch (final Exception e)
        {
            return CompletableFuture.failedFuture(unavailable(e.toString()));
        }
    }

    /**
     * Asks this replica to take a snapshot now, whatever the entries since its last: a snapshot compacts the record log
     * below what every exporter acknowledged, which a disk past its watermark cannot wait for.
     */
    public CompletableFuture<RaftClientReply> snapshotNow(final long timeoutMs)
    {
        final RaftServer server = this.server;
        if (server == null)
        {
            return CompletableFuture.failedFuture(unavailable("not started"));
        }
        return server.snapshotManagementAsync(SnapshotManagementRequest.newCreate(clientId, selfId,
            group.getGroupId(), callIds.incrementAndGet(), timeoutMs, 1));
    }

    /** Asks this replica's Raft server to hand the leadership to {@code target}, or to step down when it is null. */
    CompletableFuture<RaftClientReply> submitTransfer(final RaftPeerId target, final long timeoutMs) throws IOException
    {
        return server.transferLeadershipAsync(new TransferLeadershipRequest(clientId, selfId, group.getGroupId(),
            callIds.incrementAndGet(), target, timeoutMs));
    }

    private RaftClient client()
    {
        return client.get(() -> unavailable("closed"));
    }

    PartitionException toPartitionException(final RaftClientReply reply)
    {
        final NotLeaderException notLeader = reply.getNotLeaderException();
        if (notLeader != null)
        {
            final RaftPeer suggested = notLeader.getSuggestedLeader();
            return notLeader(suggested == null ? -1 : brokerIdOf(suggested.getId()));
        }
        final LeaderNotReadyException notReady = reply.getLeaderNotReadyException();
        if (notReady != null)
        {
            return new PartitionException(ErrorCode.NOT_LEADER, partitionId, brokerId,
                "partition " + partitionId + " on broker " + brokerId + ": leader not ready yet (leader is " +
                brokerId + ")");
        }
        return unavailable(String.valueOf(reply.getException()));
    }

    private PartitionException notLeader(final int leaderId)
    {
        return new PartitionException(ErrorCode.NOT_LEADER, partitionId, leaderId,
            "partition " + partitionId + " on broker " + brokerId + ": not leader (leader is " +
            (leaderId < 0 ? "unknown" : String.valueOf(leaderId)) + ")");
    }

    PartitionException unavailable(final String why)
    {
        return new PartitionException(ErrorCode.UNAVAILABLE, partitionId, -1,
            "partition " + partitionId + " on broker " + brokerId + ": unavailable: " + why);
    }

    // ------------------------------------------------------------------------------------------- status

    public PartitionStatus status()
    {
        final RaftServer.Division division = division();
        PartitionRole role = PartitionRole.INACTIVE;
        long term = 0;
        int leaderId = -1;
        if (division != null)
        {
            final DivisionInfo info = division.getInfo();
            role = switch (info.getCurrentRole())
            {
                case LEADER -> PartitionRole.LEADER;
                case FOLLOWER -> PartitionRole.FOLLOWER;
                case CANDIDATE -> PartitionRole.CANDIDATE;
                default -> PartitionRole.INACTIVE;
            };
            term = info.getCurrentTerm();
            leaderId = brokerIdOf(info.getLeaderId());
        }
        final Map<String, Long> positions = new LinkedHashMap<>();
        state.exporterIds().stream().sorted()
            .forEach((id) -> positions.put(id, state.exporterPosition(id)));
        return new PartitionStatus(partitionId, role, term, leaderId, exporting.heldState(),
            exporting.version(), state.lastPosition(), state.exportedPosition(),
            positions, state.firstPosition(), exporting.hold());
    }

    @Override
    public void close()
    {
        closed = true;
        transfers.wakeHeldWrites();
        director.stop();
        backfills.close();
        client.close();
    }
}
