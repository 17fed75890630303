package io.sluice.broker.control;

import io.sluice.broker.exporting.ExportingStates;
import io.sluice.broker.raft.GroupMember;
import io.sluice.broker.raft.RaftPeers;
import io.sluice.broker.raft.TransferRetries;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.concurrent.Futures;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * This broker's member of the cluster control group (issue 15): one Raft group over every broker, whose replicated
 * {@link ControlState} holds the exporting state of every partition and every exporter's backfill claim. The first
 * {@code sluice.cluster.control-voters} brokers vote; every other broker follows as a non-voting Ratis listener, so
 * every broker holds a replica and answers a pause from it.
 * <p>
 * <b>Catching up.</b> A replica's state only moves forward while it runs, but one that just started, lost its data or
 * had a snapshot installed may hold less than the group committed. Until it has applied a barrier entry it proposed
 * itself ({@code ControlBarrierEntry}; its index is above everything committed before) it reports
 * {@link #caughtUp()} false, and the partitions' exporters treat every partition as paused. The barrier also makes an
 * idle leader send an emptied replica the log (RATIS-2523: heartbeats alone do not). Without a control quorum the
 * barrier does not commit, so a broker that starts then exports nothing, and nothing new is paused or resumed.
 * <p>
 * Thread-safe.
 * <p>
 * Why a little over 450 lines: besides the Raft member it holds the replica's catching up and the lease expiry,
 * both small state machines over the same member and scheduler.
 */
public final class ControlGroup implements ExportingStates, AutoCloseable
{
    /** The control group's id: the same on every broker, and unlike any partition's. */
    public static final RaftGroupId GROUP_ID = RaftPeers.groupId("sluice-control-group");
    /** Pause between barrier attempts while the group has no leader or quorum. */
    static final long CATCH_UP_RETRY_MS = 500;
    /** Bound of one barrier attempt. */
    static final long CATCH_UP_ATTEMPT_MS = 10_000;
    /**
     * Barrier commits after the replica first caught up: an operator's first pause otherwise runs the commit path
     * (here and on the other replicas) nearly for the first time, at 3-6x its warm time (issue 30).
     */
    public static final int COMMIT_WARM_UPS = 8;

    /** How many times this replica's Raft client sends one entry to the leader before the entry fails. */
    public static final int CLIENT_ATTEMPTS = 50;
    /** Pause between two of those attempts. */
    public static final long CLIENT_RETRY_SLEEP_MS = 100;

    /** How often the leader looks for pause leases that ran out: a lease ends at most this late (plus a commit). */
    static final long LEASE_CHECK_MS = 200;

    private static final Logger LOG = LoggerFactory.getLogger(ControlGroup.class);

    /** Told when the replica caught up (exporting may start) and when a partition's state changed; must not block. */
    public interface Listener extends ControlState.Listener
    {
        void onCaughtUp();
    }

    private final int brokerId;
    private final GroupMember member;
    private final ControlState state;
    private final ControlStateMachine stateMachine;
    private final Listener listener;
    private final ScheduledExecutorService scheduler;
    /** Bumped when the replica must catch up again (a snapshot was installed): a barrier of an older round is stale. */
    private final AtomicLong catchUpRound = new AtomicLong();
    private volatile boolean caughtUp;
    private final java.util.concurrent.atomic.AtomicBoolean commitsWarmed = new java.util.concurrent.atomic.AtomicBoolean();
    private final java.time.Clock clock = java.time.Clock.systemUTC();
    /** A lease expiry entry in flight: the next check waits for it rather than proposing the same again. */
    private final java.util.concurrent.atomic.AtomicBoolean expiryInFlight = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile java.util.concurrent.ScheduledFuture<?> leaseChecks;
    private long catchUpStartedNanos;
    private int catchUpAttempts;

    public ControlGroup(
        final int brokerId,
        final PartitionDistribution distribution,
        final int voters,
        final Listener listener,
        final ScheduledExecutorService scheduler,
        final RaftProperties clientProperties,
        final Parameters clientParameters)
    {
        this.brokerId = brokerId;
        this.listener = listener;
        this.scheduler = scheduler;
        // Bounded: a caller gives up at its own deadline, and a request must not retry behind it for ever.
        this.member = new GroupMember("broker " + brokerId + ", the control group", brokerId, group(distribution, voters),
            clientProperties, clientParameters, RetryPolicies.retryUpToMaximumCountWithFixedSleep(CLIENT_ATTEMPTS,
            TimeDuration.valueOf(CLIENT_RETRY_SLEEP_MS, TimeUnit.MILLISECONDS)), new Refusals(brokerId));
        this.state = new ControlState(brokerId, distribution.partitionCount(), listener);
        this.stateMachine = new ControlStateMachine(brokerId, state, new ControlStateMachine.ReloadListener()
        {
            @Override
            public void onReloading()
            {
                caughtUp = false;
            }

            @Override
            public void onReloaded()
            {
                ControlGroup.this.onReloaded();
            }
        });
    }

    /**
     * The control group of a cluster: brokers 0 to {@code voters - 1} vote (at most the cluster size), every other
     * broker is a listener. Every broker computes the same group from configuration alone.
     */
    public static RaftGroup group(final PartitionDistribution distribution, final int voters)
    {
        final int voting = Math.min(voters, distribution.brokerCount());
        final List<RaftPeer> peers = new ArrayList<>();
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            peers.add(RaftPeers.peer(distribution, b, b < voting ? RaftPeerRole.FOLLOWER : RaftPeerRole.LISTENER));
        }
        return RaftGroup.valueOf(GROUP_ID, peers);
    }

    public RaftGroup raftGroup()
    {
        return member.group();
    }

    /** This broker's member of the control group. */
    public GroupMember member()
    {
        return member;
    }

    public ControlStateMachine stateMachine()
    {
        return stateMachine;
    }

    public ControlState state()
    {
        return state;
    }

    public void attach(final RaftServer server)
    {
        member.attach(server);
    }

    /**
     * Warms this member's Raft client (on the calling thread, then asynchronously): a broker's start calls it beside
     * Ratis's recovery, so the catch-up's first proposal finds the gRPC client code loaded and the leader known.
     */
    public CompletableFuture<Void> warmClient()
    {
        return member.warmClient();
    }

    /**
     * Starts catching up, on the scheduler: the first proposal builds this member's Raft client (cold gRPC code, a
     * good part of a second), which the broker's start need not wait for. Once the group is added to the Raft server.
     */
    public void start()
    {
        final long round = catchUpRound.get();
        scheduler.execute(() -> catchUp(round));
        leaseChecks = scheduler.scheduleWithFixedDelay(this::endExpiredLeases, LEASE_CHECK_MS, LEASE_CHECK_MS,
            TimeUnit.MILLISECONDS);
    }

    /** This broker's clock in epoch microseconds: the time of what it proposes. */
    public long nowMicros()
    {
        return epochMicros(clock);
    }

    static long epochMicros(final java.time.Clock clock)
    {
        final java.time.Instant now = clock.instant();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    /**
     * On the ready leader: proposes one entry ending every leased hold that ran out, so the pause ends on every pair
     * by itself. Whichever broker leads does it, so it survives the leader's loss; applying it twice changes nothing.
     */
    private void endExpiredLeases()
    {
        try
        {
            if (member.isClosed() || !caughtUp || !isLeader() || expiryInFlight.get())
            {
                return;
            }
            final long now = nowMicros();
            final java.util.Map<Integer, Long> expired = state.expiredLeases(now);
            // A backup's hold has its lease too (issue 26): the same entry ends it, so a gateway that died holding
            // leaves exports acknowledged again within the lease.
            final long backupHold = state.expiredBackupHold(now);
            if ((expired.isEmpty() && backupHold == 0) || !expiryInFlight.compareAndSet(false, true))
            {
                return;
            }
            commit(ControlEntries.leaseExpiry(expired, backupHold, brokerId, now))
                .orTimeout(CATCH_UP_ATTEMPT_MS, TimeUnit.MILLISECONDS)
                .whenComplete((index, failure) ->
                {
                    expiryInFlight.set(false);
                    if (failure != null)
                    {
                        LOG.warn("broker {}: ending the pause leases that ran out on partitions {} failed (retried): {}",
                            brokerId, expired.keySet(), Futures.unwrapAll(failure).toString());
                    }
                });
        }
        catch (final RuntimeException e)
        {
            expiryInFlight.set(false);
            LOG.warn("broker {}: pause lease check failed: {}", brokerId, e.toString());
        }
    }

    // ------------------------------------------------------------------------------------------- exporting states

    @Override
    public ExportingState state(final int partitionId)
    {
        return state.stamp(partitionId).state();
    }

    @Override
    public long version(final int partitionId)
    {
        return state.stamp(partitionId).version();
    }

    @Override
    public io.sluice.protocol.cluster.ExportingHold hold(final int partitionId)
    {
        final ExportingStamp stamp = state.stamp(partitionId);
        return new io.sluice.protocol.cluster.ExportingHold(stamp.sinceMicros(), stamp.expiresAtMicros(),
            stamp.expiredAtMicros());
    }

    @Override
    public boolean caughtUp()
    {
        return caughtUp;
    }

    @Override
    public boolean backupHeld()
    {
        return state.backupHold() != null;
    }

    // ------------------------------------------------------------------------------------------- Raft

    /** This broker's division of the control group, null before it is added or after it closed. */
    public RaftServer.Division division()
    {
        return member.openDivision();
    }

    /** The control group's leader as this replica knows it, or -1. */
    public int leaderId()
    {
        return member.knownLeaderId();
    }

    /** Whether this replica is the group's ready leader. */
    public boolean isLeader()
    {
        return member.isReadyLeader();
    }

    /**
     * Commits an entry: proposed in process when this replica leads, through a Raft client to the leader otherwise
     * ({@link GroupMember#commit}). Completes with the entry's index once committed (not yet applied here:
     * {@link #awaitApplied}); fails with {@link ControlGroupException} when it was refused or could not be sent. The
     * caller bounds the wait.
     */
    CompletableFuture<Long> commit(final Message entry)
    {
        return commitWithReply(entry).thenApply(Committed::index);
    }

    /** An entry the group committed, and what its apply answered the proposer (empty for most entries). */
    record Committed(long index, ByteString reply)
    {
    }

    /**
     * As {@link #commit}, with the reply of the entry's apply (on the leader; every replica computes the same one).
     */
    CompletableFuture<Committed> commitWithReply(final Message entry)
    {
        return member.commit(entry).thenApply((r) ->
            new Committed(r.getLogIndex(), r.getMessage() == null ? ByteString.EMPTY : r.getMessage().getContent()));
    }

    /**
     * The commit index this replica knows: on the ready leader ({@link #isLeader}), everything any proposer was told
     * is committed, so a read after this replica applied it sees every answered change. -1 before the group runs here.
     */
    long commitIndex()
    {
        return member.commitIndex();
    }

    /** Completes once this replica has applied the entry at {@code index}. */
    CompletableFuture<Void> awaitApplied(final long index)
    {
        return stateMachine.awaitApplied(index);
    }

    /** The control group's refusals, all one {@link ControlGroupException}: its callers only report them. */
    private record Refusals(int brokerId) implements GroupMember.Refusals
    {
        @Override
        public RuntimeException notLeader(final int leaderId, final Throwable cause)
        {
            return refused(cause);
        }

        @Override
        public RuntimeException leaderNotReady(final Throwable cause)
        {
            return refused(cause);
        }

        @Override
        public RuntimeException refused(final Throwable cause)
        {
            return new ControlGroupException("broker " + brokerId + ": the control group refused an entry: " + cause);
        }

        @Override
        public RuntimeException unavailable(final String why)
        {
            return new ControlGroupException("broker " + brokerId + ": cannot send to the control group: " + why);
        }
    }

    /**
     * Controlled shutdown: when this broker leads the group, hands the leadership to another voter that is in sync
     * (trying each, at most {@code bound} in all), so pauses during a rolling restart do not wait out an election.
     * Returns the new leader, or -1 when this broker did not lead or no voter took over.
     */
    public int handOverLeadership(final Duration bound)
    {
        final RaftServer.Division division = division();
        if (division == null || !division.getInfo().isLeader())
        {
            return -1;
        }
        final Iterator<Integer> voters = division.getGroup().getPeers().stream()
            .filter((peer) -> !peer.getId().equals(member.selfId()) && peer.getStartupRole() != RaftPeerRole.LISTENER)
            .map((peer) -> RaftPeers.brokerIdOf(peer.getId()))
            .iterator();
        // Each voter once, while at least 100 ms are left; the first that takes the leadership ends it.
        final TransferRetries.Plan plan = (last, remainingNanos) ->
        {
            if (last != null && !last.succeeded())
            {
                LOG.info("broker {}: broker {} did not take the control group's leadership: {}", brokerId,
                    last.targetBrokerId(), last.failure().toString());
            }
            if (last != null && last.succeeded())
            {
                return new TransferRetries.Stop(null);
            }
            return voters.hasNext() && remainingNanos >= TimeUnit.MILLISECONDS.toNanos(100) ?
                new TransferRetries.Transfer(voters.next()) : new TransferRetries.Stop(null);
        };
        final TransferRetries.Attempt attempt = (target, remainingNanos) ->
        {
            final long timeoutMs = Math.min(TimeUnit.NANOSECONDS.toMillis(remainingNanos), 2_000);
            return member.transferLeadership(target, timeoutMs).orTimeout(timeoutMs + 500, TimeUnit.MILLISECONDS)
                .thenApply((reply) ->
                {
                    if (!reply.isSuccess())
                    {
                        throw new CompletionException(reply.getException());
                    }
                    return target;
                });
        };
        final TransferRetries.Attempted last = TransferRetries.run(plan, attempt,
            System.nanoTime() + bound.toNanos(), 0, System::nanoTime).join().last();
        if (last == null || !last.succeeded())
        {
            return -1;
        }
        LOG.info("broker {}: handed the control group's leadership to broker {}", brokerId, last.leader());
        return last.leader();
    }

    // ------------------------------------------------------------------------------------------- catching up

    private void onReloaded()
    {
        // A snapshot from the leader replaced the state: catch up to the group again before exporting.
        caughtUp = false;
        catchUp(catchUpRound.incrementAndGet());
    }

    private void catchUp(final long round)
    {
        if (member.isClosed() || round != catchUpRound.get())
        {
            return;
        }
        synchronized (this)
        {
            if (catchUpAttempts++ == 0)
            {
                catchUpStartedNanos = System.nanoTime();
            }
        }
        commit(ControlEntries.barrier(brokerId))
            .thenCompose((index) -> awaitApplied(index).thenApply((applied) -> index))
            .orTimeout(CATCH_UP_ATTEMPT_MS, TimeUnit.MILLISECONDS)
            .whenComplete((index, failure) ->
            {
                if (member.isClosed() || round != catchUpRound.get())
                {
                    return;
                }
                if (failure == null)
                {
                    final long tookMs;
                    final int attempts;
                    synchronized (this)
                    {
                        tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - catchUpStartedNanos);
                        attempts = catchUpAttempts;
                        catchUpAttempts = 0;
                    }
                    caughtUp = true;
                    LOG.info("broker {}: control group replica caught up at index {} in {} ms ({} attempts, leader {}): " +
                        "exporting follows it now", brokerId, index, tookMs, attempts, leaderId());
                    listener.onCaughtUp();
                    if (commitsWarmed.compareAndSet(false, true))
                    {
                        warmCommits();
                    }
                    return;
                }
                final int attempts;
                synchronized (this)
                {
                    attempts = catchUpAttempts;
                }
                // At a cluster's start the first brokers wait for the others: say so once, warn if it lasts.
                if (attempts == 1)
                {
                    LOG.info("broker {}: waiting for the control group to catch up with ({}); nothing is exported here " +
                        "until then", brokerId, Futures.unwrapAll(failure).toString());
                }
                else if (attempts % 20 == 0)
                {
                    LOG.warn("broker {}: control group replica not caught up yet ({} attempts; no control quorum?): {}; " +
                        "nothing is exported here until it is", brokerId, attempts, Futures.unwrapAll(failure).toString());
                }
                try
                {
                    scheduler.schedule(() -> catchUp(round), CATCH_UP_RETRY_MS, TimeUnit.MILLISECONDS);
                }
                catch (final RejectedExecutionException e)
                {
                    // the broker is closing
                }
            });
    }

    /** {@value #COMMIT_WARM_UPS} barrier commits one after the other: they change nothing; a failure only costs warmth. */
    private void warmCommits()
    {
        final long startNs = System.nanoTime();
        CompletableFuture<Long> chain = CompletableFuture.completedFuture(0L);
        for (int i = 0; i < COMMIT_WARM_UPS; i++)
        {
            chain = chain.thenCompose((index) -> member.isClosed() ? CompletableFuture.completedFuture(index) :
                commit(ControlEntries.barrier(brokerId)));
        }
        chain.orTimeout(CATCH_UP_ATTEMPT_MS, TimeUnit.MILLISECONDS).whenComplete((index, failure) ->
        {
            if (!member.isClosed())
            {
                LOG.info("broker {}: control commit path warmed by {} barrier commits (change nothing) in {} ms{}",
                    brokerId, COMMIT_WARM_UPS, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs),
                    failure == null ? "" : ": " + Futures.unwrapAll(failure));
            }
        });
    }

    @Override
    public void close()
    {
        member.close();
        final java.util.concurrent.ScheduledFuture<?> checks = leaseChecks;
        if (checks != null)
        {
            checks.cancel(false);
        }
    }
}
