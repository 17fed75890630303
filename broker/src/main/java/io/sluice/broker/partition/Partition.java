package io.sluice.broker.partition;

import io.sluice.broker.backfill.BackfillEntry;
import io.sluice.broker.backfill.BackfillMessages;
import io.sluice.broker.backfill.BackfillRunnerConfig;
import io.sluice.broker.backfill.ExportingSwitch;
import io.sluice.broker.backfill.PartitionBackfills;
import io.sluice.broker.backfill.RecordLogBackfillSource;
import io.sluice.broker.backfill.SpiBackfillExporterFactory;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.ExporterRegistry;
import io.sluice.broker.log.codecs.ExporterPositionsEntryEncoder;
import io.sluice.broker.log.codecs.ExportingStateEntryEncoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;
import org.agrona.ExpandableArrayBuffer;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
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
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.TransferLeadershipException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

/**
 * One partition replica on this broker: its Raft group, state machine and exporter director, and the
 * operations the command and admin API run on it. Thread-safe.
 */
public final class Partition implements PartitionListener, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Partition.class);
    /** Longer than a transfer's first step (the transferee's election) takes, far shorter than clients wait. */
    static final Duration STUCK_STEP_DOWN_GRACE = Duration.ofSeconds(1);
    /** The results after which Ratis 3.2 never completes its pending transfer (see {@link #leftSteppingDown}). */
    private static final Pattern TRANSFER_FAILED_BEFORE_START =
        Pattern.compile("NULL_FOLLOWER|NULL_LOG_APPENDER|LAST_ENTRY_CHANGED|COMPLETED_EXCEPTIONALLY|FAILED_TO_START");
    /** One attempt of a requested rebalance's transfer; the rebalance's timeout bounds all of them. */
    static final Duration REBALANCE_ATTEMPT = Duration.ofSeconds(2);
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(300);
    /** How long a transfer waits at most for proposed local writes to commit before it starts. */
    private static final long MAX_WRITE_DRAIN_MS = 200;
    private static final String PEER_PREFIX = "broker-";
    /**
     * How long a follower waits for the leader's own copy of the same request to commit the change before it
     * forwards the entry itself: the gateway sends the same version to every replica at once.
     */
    private static final long FOLLOWER_WAIT_MS = 300;
    /**
     * A follower counts as in sync when the leader heard from it this recently and its commit index is at most
     * {@link #IN_SYNC_MAX_LAG_ENTRIES} behind the leader's: Ratis blocks writes while a transfer waits for the
     * transferee to catch up, so only a replica that is nearly there is worth handing the leadership to.
     */
    static final long IN_SYNC_MAX_RPC_AGE_MS = 1_000;
    static final long IN_SYNC_MAX_LAG_ENTRIES = 64;
    /** How long an append waits for a new leader to become ready before the leader-not-ready answer. */
    private static final long LEADER_READY_WAIT_MS = 1_000;
    private static final long LEADER_READY_POLL_MS = 5;

    private final int brokerId;
    private final int partitionId;
    private final int preferredBrokerId;
    private final RaftGroup group;
    private final RaftPeerId selfId;
    private final PartitionStateMachine stateMachine;
    /** The replicated state the state machine applies to (the same object for the replica's whole life). */
    private final PartitionState state;
    private final ExporterDirector director;
    private final PartitionBackfills backfills;
    private final RaftProperties clientProperties;
    private final Parameters clientParameters;
    private final Duration adminTimeout;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final AppendBatcher batcher;
    private volatile RaftServer server;
    private volatile RaftServer.Division cachedDivision;
    private RaftClient raftClient;
    private volatile boolean closed;
    /** Set once the broker stops: exporters stay stopped and nothing takes the leadership back here. */
    private volatile boolean stopping;
    /**
     * The running leadership transfer, completing with the leader after it (-1 when it failed), or null: the
     * exporters stay stopped and appends wait while it runs.
     */
    private final AtomicReference<CompletableFuture<Integer>> transfer = new AtomicReference<>();
    /**
     * When local writes began to be refused as "stepping down" with none succeeding since (0: they are not), and
     * when the last one was; see {@link #clearStuckStepDown}.
     */
    private volatile long steppingDownRefusalSinceNanos;
    private volatile long steppingDownRefusalLastNanos;
    /** Local writes proposed and not answered yet, and whether new ones wait for a running transfer. */
    private final AtomicInteger localWritesInFlight = new AtomicInteger();
    private volatile boolean holdingWrites;
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
        final Duration adminTimeout,
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
        this.adminTimeout = adminTimeout;
        this.clientProperties = clientProperties;
        this.batcher = new AppendBatcher(partitionId, this::appendEntry, System::currentTimeMillis);
        this.clientParameters = clientParameters;
        this.stateMachine = new PartitionStateMachine(brokerId, partitionId, exporters.keySet(), segmentSizeBytes, this);
        this.state = stateMachine.state();
        this.director = new ExporterDirector(brokerId, partitionId, state, exporters, registry, dataDir,
            exporterScheduler, this::submitExporterPositions, ackInterval.toMillis(), this::leaderTerm);
        this.exporterScheduler = exporterScheduler;
        this.backfills = new PartitionBackfills(brokerId, partitionId, state,
            new RecordLogBackfillSource(partitionId, state::recordLog),
            new SpiBackfillExporterFactory(brokerId, dataDir, exporters, registry),
            this::replicateBackfill,
            ExportingSwitch.underLock(state.exportGate(), state::exportingState),
            () -> state.exportingState() == ExportingState.PAUSED,
            backfillConfig,
            Clock.systemUTC());
        stateMachine.backfills(backfills);
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

    public ExporterDirector director()
    {
        return director;
    }

    public PartitionBackfills backfills()
    {
        return backfills;
    }

    /** NOT_LEADER (with the known leader) when this replica does not lead the partition now, else null. */
    public PartitionException notLeaderError()
    {
        final RaftServer.Division division = division();
        if (division == null || closed)
        {
            return unavailable("not started");
        }
        final DivisionInfo info = division.getInfo();
        return info.isLeader() ? null : notLeader(brokerIdOf(info.getLeaderId()));
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
        final RaftServer.Division division = division();
        if (division == null || closed)
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
            if (!closed && !stopping && transfer.get() == null && info.isLeader() && info.getCurrentTerm() == term)
            {
                director.start(term);
                backfills.onBecomeLeader();
            }
        }, exporterScheduler);
    }

    /** Starts the exporters of a ready leader whose leader-ready notification was missed. */
    public void checkLeadership()
    {
        final RaftServer.Division division = division();
        if (division == null || closed || stopping || transfer.get() != null)
        {
            return;
        }
        final DivisionInfo info = division.getInfo();
        if (info.isLeader() && info.isLeaderReady() && !director.isActive())
        {
            onLeaderReady(partitionId);
        }
        clearStuckStepDown(division);
    }

    /**
     * Ratis 3.2 leaves a leader "stepping down" for good when a leadership transfer fails before it starts (the
     * leader's log grew while it compared it with the transferee's, or the call to the transferee failed at once):
     * it refuses every write with LeaderSteppingDownException until some election happens, and only an election
     * clears it. Ratis does not expose that state, so the writes tell: when they have been refused that way for
     * {@link #STUCK_STEP_DOWN_GRACE}, none succeeded since, and no transfer of ours runs (nor one Ratis starts
     * itself for peer priorities), this leader steps down and its replicas elect a leader again, possibly this
     * one, within an election timeout.
     */
    private void clearStuckStepDown(final RaftServer.Division division)
    {
        final long since = steppingDownRefusalSinceNanos;
        if (since == 0)
        {
            return;
        }
        final long now = System.nanoTime();
        final long graceNanos = STUCK_STEP_DOWN_GRACE.toNanos();
        if (now - since < graceNanos || now - steppingDownRefusalLastNanos > 2 * graceNanos ||
            !division.getInfo().isLeader() || hasPeerPriorities())
        {
            return;
        }
        steppingDownRefusalSinceNanos = 0;
        stepDown("Ratis has refused writes as \"stepping down\" for " + TimeUnit.NANOSECONDS.toMillis(now - since) +
            " ms with no leadership transfer running");
    }

    /** Notes how a local write ended, for {@link #clearStuckStepDown}. */
    private void noteWriteOutcome(final RaftClientReply reply)
    {
        if (reply.getException() instanceof LeaderSteppingDownException)
        {
            final long now = System.nanoTime();
            steppingDownRefusalLastNanos = now;
            if (steppingDownRefusalSinceNanos == 0)
            {
                steppingDownRefusalSinceNanos = now;
            }
        }
        else if (reply.isSuccess())
        {
            steppingDownRefusalSinceNanos = 0;
        }
    }

    @Override
    public void onLeaderChanged(final int partitionId, final RaftPeerId newLeaderId)
    {
        steppingDownRefusalSinceNanos = 0;
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

    @Override
    public void onExportingStateApplied(final int partitionId, final ExportingState state)
    {
        director.wakeUp();
    }

    // ------------------------------------------------------------------------------------------- commands

    /**
     * Appends records on the local leader, coalesced with concurrent appends into few entries; completes
     * with the records' positions once committed by a quorum and applied here. Fails with
     * {@link PartitionException} (NOT_LEADER with the known leader, UNAVAILABLE).
     *
     * @param batch the records encoded as a whole {@code AppendEntry} ({@link AppendEntries}).
     */
    public CompletableFuture<AppendPositions> append(final byte[] batch, final int count)
    {
        return append(batch, count, null);
    }

    /**
     * Appends records under an idempotency id (null for none): an id the partition remembers appends nothing again
     * and completes with the positions it was first given; with another request digest it fails with CONFLICT.
     */
    public CompletableFuture<AppendPositions> append(final byte[] batch, final int count, final AppendBatcher.AppendId id)
    {
        // During a leadership transfer Ratis refuses writes: wait for it (tens of milliseconds), then answer with the
        // new leader, so the sender goes straight there instead of backing off and searching.
        final CompletableFuture<Integer> pendingTransfer = transfer.get();
        if (pendingTransfer != null)
        {
            return pendingTransfer.handle((leader, error) -> null).thenCompose((ignored) -> append(batch, count, id));
        }
        final RaftServer.Division division = division();
        if (division != null && !division.getInfo().isLeader())
        {
            return CompletableFuture.failedFuture(notLeader(brokerIdOf(division.getInfo().getLeaderId())));
        }
        if (division != null && !division.getInfo().isLeaderReady())
        {
            // A new leader refuses writes until its first entry commits: wait for that briefly rather than refuse.
            return whenLeaderReady(division, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LEADER_READY_WAIT_MS))
                .thenCompose((ignored) -> batcher.append(batch, count, id));
        }
        return batcher.append(batch, count, id);
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

    private CompletableFuture<AppendOutcomes> appendEntry(final byte[] entry)
    {
        final PartitionException notLeader = notLeaderError();
        if (notLeader != null)
        {
            return CompletableFuture.failedFuture(notLeader);
        }
        return submitLocal(Message.valueOf(UnsafeByteOperations.unsafeWrap(entry))).thenApply((reply) ->
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

    /**
     * Makes an exporting state change durable and replicated, then waits until this replica applied it.
     * Answers at once when the held version is already at least {@code version}. Fails at the admin
     * timeout when the group has no quorum; never reports a change that was not committed. A follower whose
     * leader got the same request ({@code leaderTargeted}) waits briefly for the leader's entry rather than
     * proposing its own, so a fan-out to every replica costs one entry per partition; otherwise it proposes at once.
     */
    public CompletableFuture<Void> changeExportingState(
        final ExportingState state, final long version, final boolean leaderTargeted)
    {
        if (this.state.exportingStateVersion() >= version)
        {
            return CompletableFuture.completedFuture(null);
        }
        final RaftServer.Division division = division();
        if (division == null || closed)
        {
            return CompletableFuture.failedFuture(unavailable("not started"));
        }
        final Message entry = exportingStateEntry(state, version);
        if (division.getInfo().isLeader())
        {
            return commitExportingState(proposeAsLeader(entry));
        }
        if (!leaderTargeted)
        {
            return commitExportingState(submitThroughClient(entry));
        }
        // Follower: the leader's own request usually commits this version within a round trip; answer from the
        // applied state then, and forward the entry only when it does not show up (the sender's leader was stale).
        return this.state.awaitExportingStateVersion(version, FOLLOWER_WAIT_MS).thenCompose((applied) -> applied ?
            CompletableFuture.completedFuture(null) : commitExportingState(submitThroughClient(entry)));
    }

    /**
     * Proposes an exporting state entry on this leader. Local writes are held while a leadership transfer starts
     * and while the broker stops (see {@link #transferLeadership}); an exporting state change must not fail for
     * that, so it waits for a running transfer and then proposes here if this replica still leads, or goes to the
     * leader through the Raft client otherwise, as it does when this replica's local proposal is refused.
     */
    private CompletableFuture<RaftClientReply> proposeAsLeader(final Message entry)
    {
        final CompletableFuture<Integer> running = transfer.get();
        if (running != null)
        {
            return running.handle((leader, error) -> null).thenCompose((ignored) -> proposeAsLeader(entry));
        }
        if (stopping || !isLeader())
        {
            return submitThroughClient(entry);
        }
        return submitLocal(entry).handle((reply, error) ->
        {
            if (reply != null && reply.isSuccess())
            {
                return CompletableFuture.completedFuture(reply);
            }
            // Refused (a transfer started meanwhile, or leadership moved): wait for the transfer, or forward.
            return transfer.get() != null ? proposeAsLeader(entry) : submitThroughClient(entry);
        }).thenCompose((next) -> next);
    }

    /** Waits until this replica applied the committed entry, at most the admin timeout. */
    private CompletableFuture<Void> commitExportingState(final CompletableFuture<RaftClientReply> committed)
    {
        return committed
            .thenCompose((reply) ->
            {
                if (!reply.isSuccess())
                {
                    throw toPartitionException(reply);
                }
                return stateMachine.awaitApplied(reply.getLogIndex());
            })
            .orTimeout(adminTimeout.toMillis(), TimeUnit.MILLISECONDS)
            .exceptionally((e) ->
            {
                final Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                if (cause instanceof PartitionException)
                {
                    throw (PartitionException)cause;
                }
                if (cause instanceof java.util.concurrent.TimeoutException)
                {
                    throw new PartitionException(ErrorCode.TIMEOUT, partitionId, -1, "partition " + partitionId +
                        " on broker " + brokerId + ": exporting state change not committed within " + adminTimeout +
                        " (no quorum?)");
                }
                throw unavailable(cause.toString());
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
        return submitLocal(backfillEntry(entry)).thenCompose((reply) ->
        {
            if (!reply.isSuccess())
            {
                throw toPartitionException(reply);
            }
            return stateMachine.awaitApplied(reply.getLogIndex());
        });
    }

    private CompletableFuture<Object> submitExporterPositions(final Map<String, Long> positions)
    {
        final RaftServer.Division division = division();
        if (division == null || !division.getInfo().isLeader())
        {
            return CompletableFuture.completedFuture(null);
        }
        return submitLocal(exporterPositionsEntry(positions)).thenApply((r) -> r);
    }

    private CompletableFuture<RaftClientReply> submitLocal(final Message message)
    {
        final RaftClientRequest request = RaftClientRequest.newBuilder()
            .setClientId(clientId)
            .setServerId(selfId)
            .setGroupId(group.getGroupId())
            .setCallId(callIds.incrementAndGet())
            .setMessage(message)
            .setType(RaftClientRequest.writeRequestType())
            .build();
        localWritesInFlight.incrementAndGet();
        if (holdingWrites)
        {
            localWritesInFlight.decrementAndGet();
            return CompletableFuture.failedFuture(unavailable(stopping ?
                "broker " + brokerId + " is stopping and hands its leaderships over" : "a leadership transfer is running"));
        }
        try
        {
            return server.submitClientRequestAsync(request).whenComplete((reply, error) ->
            {
                localWritesInFlight.decrementAndGet();
                if (reply != null)
                {
                    noteWriteOutcome(reply);
                }
            });
        }
        catch (final Exception e)
        {
            localWritesInFlight.decrementAndGet();
            return CompletableFuture.failedFuture(unavailable(e.toString()));
        }
    }

    private CompletableFuture<RaftClientReply> submitThroughClient(final Message message)
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

    private synchronized RaftClient client()
    {
        if (closed)
        {
            throw unavailable("closed");
        }
        if (raftClient == null)
        {
            final RaftServer.Division division = division();
            final RaftPeerId leader = division == null ? null : division.getInfo().getLeaderId();
            raftClient = RaftClient.newBuilder()
                .setProperties(clientProperties)
                .setParameters(clientParameters == null ? new Parameters() : clientParameters)
                .setRaftGroup(group)
                .setClientId(ClientId.randomId())
                .setLeaderId(leader)
                .setRetryPolicy(RetryPolicies.retryForeverWithSleep(TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
                .build();
        }
        return raftClient;
    }

    private PartitionException toPartitionException(final RaftClientReply reply)
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

    private PartitionException unavailable(final String why)
    {
        return new PartitionException(ErrorCode.UNAVAILABLE, partitionId, -1,
            "partition " + partitionId + " on broker " + brokerId + ": unavailable: " + why);
    }

    // ------------------------------------------------------------------------------------------- leader balance

    /** The broker that should lead this partition when it can: the first of the partition's placement. */
    public int preferredBrokerId()
    {
        return preferredBrokerId;
    }

    public boolean isLeader()
    {
        final RaftServer.Division division = division();
        return division != null && !closed && division.getInfo().isLeader();
    }

    /** The broker this replica believes leads the partition, or -1. */
    public int knownLeaderId()
    {
        final RaftServer.Division division = division();
        return division == null ? -1 : brokerIdOf(division.getInfo().getLeaderId());
    }

    /**
     * Why the replica on {@code otherBrokerId} is not in sync as this leader sees it, or null when it is: the
     * leader heard from it within {@value #IN_SYNC_MAX_RPC_AGE_MS} ms and its commit index is at most
     * {@value #IN_SYNC_MAX_LAG_ENTRIES} entries behind the leader's.
     */
    public String outOfSyncReason(final int otherBrokerId)
    {
        return outOfSyncReason(otherBrokerId, IN_SYNC_MAX_LAG_ENTRIES);
    }

    /** As {@link #outOfSyncReason(int)}, with at most {@code maxLagEntries} of commit index behind the leader. */
    public String outOfSyncReason(final int otherBrokerId, final long maxLagEntries)
    {
        final RaftServer.Division division = division();
        if (division == null || closed)
        {
            return "partition " + partitionId + " on broker " + brokerId + " is not started";
        }
        final DivisionInfo info = division.getInfo();
        if (!info.isLeader())
        {
            return "broker " + brokerId + " does not lead partition " + partitionId;
        }
        final String peer = peerId(otherBrokerId).toString();
        final long rpcAgeMs = lastRpcAgeMs(info, peer);
        if (rpcAgeMs < 0)
        {
            return "broker " + otherBrokerId + " is not a follower of partition " + partitionId;
        }
        if (rpcAgeMs > IN_SYNC_MAX_RPC_AGE_MS)
        {
            return "broker " + otherBrokerId + " has not answered the leader of partition " + partitionId + " for " +
                rpcAgeMs + " ms";
        }
        final Map<String, Long> commitIndices = new HashMap<>();
        for (final CommitInfoProto commit : division.getCommitInfos())
        {
            commitIndices.put(commit.getServer().getId().toStringUtf8(), commit.getCommitIndex());
        }
        final long leaderCommit = division.getRaftLog().getLastCommittedIndex();
        final long followerCommit = commitIndices.getOrDefault(peer, -1L);
        if (followerCommit + maxLagEntries < leaderCommit)
        {
            return "broker " + otherBrokerId + " is catching up on partition " + partitionId + " (commit index " +
                followerCommit + " of " + leaderCommit + ")";
        }
        return null;
    }

    /** Milliseconds since this leader last heard from the peer, or -1 when it is not a follower here. */
    private static long lastRpcAgeMs(final DivisionInfo info, final String peer)
    {
        final RoleInfoProto role = info.getRoleInfoProto();
        if (role.hasLeaderInfo())
        {
            for (final ServerRpcProto follower : role.getLeaderInfo().getFollowerInfoList())
            {
                if (follower.getId().getId().toStringUtf8().equals(peer))
                {
                    return follower.getLastRpcElapsedTimeMs();
                }
            }
        }
        return -1;
    }

    /** Whether this leader heard from any follower within {@value #IN_SYNC_MAX_RPC_AGE_MS} ms. */
    public boolean hasAnsweringFollower(final Duration within)
    {
        final RaftServer.Division division = division();
        if (division == null || closed || !division.getInfo().isLeader())
        {
            return false;
        }
        final RoleInfoProto role = division.getInfo().getRoleInfoProto();
        return role.hasLeaderInfo() && role.getLeaderInfo().getFollowerInfoList().stream()
            .anyMatch((follower) -> follower.getLastRpcElapsedTimeMs() <= within.toMillis());
    }

    /**
     * Whether the group's configuration gives its peers different priorities: Ratis then moves the leadership to
     * the highest itself and refuses transfers elsewhere, so the preferred-leader balance leaves the group alone.
     */
    public boolean hasPeerPriorities()
    {
        final RaftServer.Division division = division();
        return division != null && division.getRaftConf().getCurrentPeers().stream()
            .mapToInt(RaftPeer::getPriority).distinct().count() > 1;
    }

    /**
     * Moves the leadership to the preferred broker when this replica leads, is not the preferred one, and the
     * preferred replica is in sync; completes with where the leadership is afterwards and, unless that is the
     * preferred broker, why. Fails with NOT_LEADER (naming the known leader) when this replica does not lead.
     */
    public CompletableFuture<RebalanceOutcome> rebalance(final Duration timeout)
    {
        final PartitionException notLeader = notLeaderError();
        if (notLeader != null)
        {
            return CompletableFuture.failedFuture(notLeader);
        }
        if (preferredBrokerId == brokerId)
        {
            return CompletableFuture.completedFuture(new RebalanceOutcome(partitionId, preferredBrokerId, brokerId, null));
        }
        if (stopping)
        {
            return CompletableFuture.completedFuture(new RebalanceOutcome(partitionId, preferredBrokerId, brokerId,
                "broker " + brokerId + " is stopping and hands its leaderships over"));
        }
        final String outOfSync = outOfSyncReason(preferredBrokerId);
        if (outOfSync != null)
        {
            return CompletableFuture.completedFuture(new RebalanceOutcome(partitionId, preferredBrokerId, brokerId,
                outOfSync));
        }
        return transferWithRetries(preferredBrokerId, System.nanoTime() + timeout.toNanos()).handle((leader, error) ->
        {
            if (error == null)
            {
                return new RebalanceOutcome(partitionId, preferredBrokerId, leader, leader == preferredBrokerId ? null :
                    "the leadership went to broker " + leader);
            }
            final Throwable cause = error instanceof CompletionException && error.getCause() != null ?
                error.getCause() : error;
            return new RebalanceOutcome(partitionId, preferredBrokerId, knownLeaderId(), cause.getMessage());
        });
    }

    /**
     * Transfers in attempts of at most {@link #REBALANCE_ATTEMPT} until {@code deadlineNanos}: a transferee can
     * decline the election Ratis asks it to start (it had not heard from this leader yet, or the log moved on),
     * and Ratis then only waits out the attempt. Tried again while this replica still leads and the target is in
     * sync; the last failure is the answer.
     */
    private CompletableFuture<Integer> transferWithRetries(final int targetBrokerId, final long deadlineNanos)
    {
        final long remainingNanos = deadlineNanos - System.nanoTime();
        final Duration attempt = Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1),
            Math.min(remainingNanos, REBALANCE_ATTEMPT.toNanos())));
        return transferLeadership(targetBrokerId, attempt).handle((leader, error) ->
        {
            final boolean again = error != null && deadlineNanos - System.nanoTime() > MIN_RETRY_NANOS &&
                notLeaderError() == null && outOfSyncReason(targetBrokerId) == null;
            if (again)
            {
                LOG.info("partition {} on broker {}: leadership transfer to broker {} failed, trying again: {}",
                    partitionId, brokerId, targetBrokerId,
                    (error instanceof CompletionException && error.getCause() != null ? error.getCause() : error).getMessage());
                return transferWithRetries(targetBrokerId, deadlineNanos);
            }
            return error == null ? CompletableFuture.completedFuture(leader) : CompletableFuture.<Integer>failedFuture(error);
        }).thenCompose((next) -> next);
    }

    /** Where a partition's leadership is after a rebalance; {@code reason} is null exactly when it is on the preferred broker. */
    public record RebalanceOutcome(int partitionId, int preferredBrokerId, int leaderId, String reason)
    {
    }

    /** The first in-sync follower, the preferred broker first, then in placement order; -1 when there is none. */
    public int inSyncFollower(final java.util.List<Integer> placement)
    {
        if (preferredBrokerId != brokerId && outOfSyncReason(preferredBrokerId) == null)
        {
            return preferredBrokerId;
        }
        for (final int candidate : placement)
        {
            if (candidate != brokerId && outOfSyncReason(candidate) == null)
            {
                return candidate;
            }
        }
        return -1;
    }

    /**
     * Hands this replica's leadership to {@code targetBrokerId} with Ratis's leadership transfer, waiting at most
     * {@code timeout}; completes with the leader after the transfer. This replica's exporters and backfills stop
     * before the transfer starts, so the new leader never exports beside them; if the transfer fails while this
     * replica still leads, they start again. Fails with {@link PartitionException}: NOT_LEADER when this replica
     * does not lead, CONFLICT when a transfer is already running, UNAVAILABLE when the transfer failed.
     */
    public CompletableFuture<Integer> transferLeadership(final int targetBrokerId, final Duration timeout)
    {
        final PartitionException notLeader = notLeaderError();
        if (notLeader != null)
        {
            return CompletableFuture.failedFuture(notLeader);
        }
        final RaftServer.Division division = division();
        if (targetBrokerId == brokerId)
        {
            return CompletableFuture.completedFuture(brokerId);
        }
        final CompletableFuture<Integer> done = new CompletableFuture<>();
        if (!transfer.compareAndSet(null, done))
        {
            return CompletableFuture.failedFuture(new PartitionException(ErrorCode.CONFLICT, partitionId, brokerId,
                "partition " + partitionId + " on broker " + brokerId + ": a leadership transfer is already running"));
        }
        director.stop();
        backfills.onLeadershipLost();
        // Ratis fails a transfer for good (see clearStuckStepDown) when the leader's log grows while it compares
        // it with the transferee's; so local writes wait out the transfer (clients retry them) and the ones
        // already proposed commit first.
        holdingWrites = true;
        final long timeoutMs = Math.max(1, timeout.toMillis());
        final long drainDeadline = System.nanoTime() +
            TimeUnit.MILLISECONDS.toNanos(Math.min(MAX_WRITE_DRAIN_MS, timeoutMs / 2));
        return localWritesDrained(drainDeadline)
            .thenCompose((drained) -> requestTransfer(targetBrokerId, timeoutMs))
            .handle((answer, error) ->
            {
                holdingWrites = stopping;
                final int leader = brokerIdOf(division.getInfo().getLeaderId());
                // Writes refused while our transfer ran say nothing about a stuck one.
                steppingDownRefusalSinceNanos = 0;
                transfer.set(null);
                done.complete(error == null && answer.isSuccess() ? leader : -1);
                if (error == null && answer.isSuccess())
                {
                    return leader < 0 ? targetBrokerId : leader;
                }
                final Throwable cause = error instanceof CompletionException && error.getCause() != null ?
                    error.getCause() : error != null ? error : answer.getException();
                final boolean leads = !closed && division.getInfo().isLeader();
                if (leads && leftSteppingDown(cause))
                {
                    stepDown("the leadership transfer to broker " + targetBrokerId + " failed before it started (" +
                        cause.getMessage() + "), after which Ratis refuses writes until an election");
                }
                else if (leads && !stopping)
                {
                    onLeaderReady(partitionId);
                }
                throw new PartitionException(ErrorCode.UNAVAILABLE, partitionId, leader,
                    "partition " + partitionId + ": leadership transfer from broker " + brokerId + " to broker " +
                    targetBrokerId + " failed: " + (cause != null ? cause.getMessage() : "unknown"));
            });
    }

    private CompletableFuture<RaftClientReply> requestTransfer(final int targetBrokerId, final long timeoutMs)
    {
        final TransferLeadershipRequest request = new TransferLeadershipRequest(clientId, selfId, group.getGroupId(),
            callIds.incrementAndGet(), peerId(targetBrokerId), timeoutMs);
        try
        {
            return server.transferLeadershipAsync(request);
        }
        catch (final Exception e)
        {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Completes once no local write is in flight, or at {@code deadlineNanos}. */
    private CompletableFuture<Void> localWritesDrained(final long deadlineNanos)
    {
        if (localWritesInFlight.get() == 0 || System.nanoTime() - deadlineNanos >= 0)
        {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(1, TimeUnit.MILLISECONDS))
            .thenCompose((ignored) -> localWritesDrained(deadlineNanos));
    }

    /**
     * Whether a failed transfer left Ratis "stepping down": the results Ratis reaches before it schedules the
     * transfer's timeout (its pending transfer is then never completed), or the refusal it answers while one is
     * pending. A timed-out transfer, or one refused up front (target not in the group), leaves nothing behind.
     */
    private static boolean leftSteppingDown(final Throwable cause)
    {
        return cause instanceof LeaderSteppingDownException ||
            cause instanceof TransferLeadershipException && cause.getMessage() != null &&
            TRANSFER_FAILED_BEFORE_START.matcher(cause.getMessage()).find();
    }

    /** Steps this leader down so its replicas elect one (possibly this one again) within an election timeout. */
    private void stepDown(final String why)
    {
        LOG.warn("partition {} on broker {}: stepping down: {}", partitionId, brokerId, why);
        final TransferLeadershipRequest stepDown = new TransferLeadershipRequest(clientId, selfId,
            group.getGroupId(), callIds.incrementAndGet(), null, STUCK_STEP_DOWN_GRACE.toMillis());
        try
        {
            server.transferLeadershipAsync(stepDown);
        }
        catch (final IOException e)
        {
            LOG.warn("partition {} on broker {}: step down failed: {}", partitionId, brokerId, e.getMessage());
        }
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
        holdingWrites = true;
        director.stop();
        backfills.onLeadershipLost();
    }

    public boolean isTransferring()
    {
        return transfer.get() != null;
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
        return new PartitionStatus(partitionId, role, term, leaderId, state.exportingState(),
            state.exportingStateVersion(), state.lastPosition(), state.exportedPosition(),
            positions);
    }


    @Override
    public void close()
    {
        closed = true;
        director.stop();
        backfills.close();
        final RaftClient client;
        synchronized (this)
        {
            client = raftClient;
            raftClient = null;
        }
        if (client != null)
        {
            try
            {
                client.close();
            }
            catch (final Exception e)
            {
                LOG.warn("partition {} on broker {}: failed to close the Raft client", partitionId, brokerId, e);
            }
        }
    }

    // ------------------------------------------------------------------------------------------- entries

    static Message exportingStateEntry(final ExportingState state, final long version)
    {
        final byte[] bytes = new byte[MessageHeaderEncoder.ENCODED_LENGTH + ExportingStateEntryEncoder.BLOCK_LENGTH];
        new ExportingStateEntryEncoder()
            .wrapAndApplyHeader(new org.agrona.concurrent.UnsafeBuffer(bytes), 0, new MessageHeaderEncoder())
            .state(PartitionStateMachine.toCode(state))
            .version(version);
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(bytes));
    }

    static Message backfillEntry(final BackfillEntry entry)
    {
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(BackfillMessages.encode(entry)));
    }

    static Message exporterPositionsEntry(final Map<String, Long> positions)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(128);
        final ExporterPositionsEntryEncoder encoder = new ExporterPositionsEntryEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        final ExporterPositionsEntryEncoder.ExportersEncoder exporters = encoder.exportersCount(positions.size());
        positions.forEach((id, position) -> exporters.next().position(position).exporterId(id));
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(Arrays.copyOf(buffer.byteArray(), length)));
    }
}
