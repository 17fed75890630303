package io.sluice.broker.leadership;

import io.sluice.broker.errors.PartitionErrors;
import io.sluice.broker.raft.GroupMember;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.server.RaftServer;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Every proposal of a partition replica (appends, backfill entries, positions) goes in process through here, and the
 * hold that keeps them out of a leadership transfer's way: while a transfer starts or the broker stops, a proposal
 * waits for the hold to change, at most {@link #HELD_WRITE_WAIT}, then is proposed here if this replica still leads,
 * or fails NOT_LEADER naming the new leader, so the sender goes there at once. A new leader not ready yet is waited
 * for the same way. Only a hold outliving the wait fails UNAVAILABLE. Thread-safe.
 */
public final class LocalWrites
{
    /**
     * How long a proposal held by a leadership transfer or a stopping broker waits for it: a transfer to an in-sync
     * replica ends in well under a second, an attempt at {@link LeadershipTransfer#ATTEMPT}; callers' deadlines
     * bound it further.
     */
    public static final Duration HELD_WRITE_WAIT = Duration.ofSeconds(3);
    /** How long a write waits for a new leader to become ready before the leader-not-ready answer. */
    private static final long LEADER_READY_WAIT_MS = 1_000;
    private static final long LEADER_READY_POLL_MS = 5;

    private final GroupMember member;
    private final PartitionErrors errors;
    private final BooleanSupplier stopping;
    private final Consumer<RaftClientReply> onReply;
    /** Local writes proposed and not answered yet, and whether new ones wait for a running transfer. */
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile boolean holding;
    /**
     * Completes (and is replaced) when the hold on local writes ends or the leader changes: held writes wait for it,
     * then propose here or learn the new leader.
     */
    private final AtomicReference<CompletableFuture<Void>> holdChange = new AtomicReference<>(new CompletableFuture<>());

    /**
     * @param stopping whether the broker stops (the hold is then for good, and says so).
     * @param onReply  told every reply to a local write (the stuck step-down guard reads them).
     */
    public LocalWrites(
        final GroupMember member,
        final PartitionErrors errors,
        final BooleanSupplier stopping,
        final Consumer<RaftClientReply> onReply)
    {
        this.member = member;
        this.errors = errors;
        this.stopping = stopping;
        this.onReply = onReply;
    }

    // ------------------------------------------------------------------------------------------- the hold

    /** Holds new writes (a transfer starts, or for good: the broker stops) or lets them go again. */
    public void hold(final boolean hold)
    {
        holding = hold;
    }

    /** Wakes the writes waiting for the hold to change (it ended, the leader changed, the replica closed). */
    public void wakeHeld()
    {
        holdChange.getAndSet(new CompletableFuture<>()).complete(null);
    }

    /** Completes once no local write is in flight, or at {@code deadlineNanos}. */
    public CompletableFuture<Void> drained(final long deadlineNanos)
    {
        if (inFlight.get() == 0 || System.nanoTime() - deadlineNanos >= 0)
        {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(1, TimeUnit.MILLISECONDS))
            .thenCompose((ignored) -> drained(deadlineNanos));
    }

    /** Counts a local write about to be proposed in; false, with nothing counted, while writes are held. */
    private boolean admit()
    {
        inFlight.incrementAndGet();
        if (holding)
        {
            inFlight.decrementAndGet();
            return false;
        }
        return true;
    }

    /** Counts an admitted local write out; {@code reply} is null when it was never proposed. */
    private void ended(final RaftClientReply reply)
    {
        inFlight.decrementAndGet();
        if (reply != null)
        {
            onReply.accept(reply);
        }
    }

    // ------------------------------------------------------------------------------------------- proposals

    /** Proposes an entry in process, waiting out a hold or a leader not ready yet (see the class comment). */
    public CompletableFuture<RaftClientReply> submit(final Message message)
    {
        return submit(message, System.nanoTime() + HELD_WRITE_WAIT.toNanos());
    }

    private CompletableFuture<RaftClientReply> submit(final Message message, final long deadlineNanos)
    {
        // Taken before admit, so a hold that ends in between still wakes the writer.
        final CompletableFuture<Void> holdChanged = holdChange.get();
        if (!admit())
        {
            final long leftNanos = deadlineNanos - System.nanoTime();
            if (member.isClosed() || leftNanos <= 0)
            {
                return CompletableFuture.failedFuture(errors.unavailable(stopping.getAsBoolean() ?
                    "broker " + errors.brokerId() + " is stopping and hands its leaderships over" :
                    "a leadership transfer is running"));
            }
            return holdChanged.copy().completeOnTimeout(null, leftNanos, TimeUnit.NANOSECONDS)
                .thenCompose((ignored) -> afterHold(message, deadlineNanos));
        }
        final RaftServer.Division division = member.division();
        if (division != null && division.getInfo().isLeader() && !division.getInfo().isLeaderReady())
        {
            // A new leader refuses writes until its first entry commits: wait for that briefly rather than refuse.
            ended(null);
            return whenLeaderReady(division, Math.min(deadlineNanos,
                    System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LEADER_READY_WAIT_MS)))
                .thenCompose((ignored) -> proposeOnce(message));
        }
        return proposeAdmitted(message);
    }

    /** The hold ended, the leader changed, or the wait is over: propose here while leading, else name the leader. */
    private CompletableFuture<RaftClientReply> afterHold(final Message message, final long deadlineNanos)
    {
        final RaftServer.Division division = member.division();
        if (division != null && division.getInfo().isLeader())
        {
            return submit(message, deadlineNanos);
        }
        return newLeaderKnown(deadlineNanos).thenApply((leader) ->
        {
            throw errors.notLeader(leader);
        });
    }

    /**
     * The leader once one other than this replica is known (a handover's election takes a moment to be heard of), or
     * -1 at the deadline.
     */
    private CompletableFuture<Integer> newLeaderKnown(final long deadlineNanos)
    {
        final int leader = member.knownLeaderId();
        final int self = errors.brokerId();
        if ((leader >= 0 && leader != self) || member.isClosed() || System.nanoTime() - deadlineNanos >= 0)
        {
            return CompletableFuture.completedFuture(leader == self ? -1 : leader);
        }
        return CompletableFuture.runAsync(() -> { },
                CompletableFuture.delayedExecutor(LEADER_READY_POLL_MS, TimeUnit.MILLISECONDS))
            .thenCompose((ignored) -> newLeaderKnown(deadlineNanos));
    }

    /** Completes once this replica is a ready leader, is no longer leader, or the deadline passed. */
    private static CompletableFuture<Void> whenLeaderReady(final RaftServer.Division division, final long deadlineNanos)
    {
        if (!division.getInfo().isLeader() || division.getInfo().isLeaderReady() ||
            System.nanoTime() - deadlineNanos >= 0)
        {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.runAsync(() -> { },
                CompletableFuture.delayedExecutor(LEADER_READY_POLL_MS, TimeUnit.MILLISECONDS))
            .thenCompose((ignored) -> whenLeaderReady(division, deadlineNanos));
    }

    /** Proposes without waiting again: a write that waited for a ready leader is not held a second time. */
    private CompletableFuture<RaftClientReply> proposeOnce(final Message message)
    {
        if (!admit())
        {
            return submit(message);
        }
        return proposeAdmitted(message);
    }

    /** Proposes a write {@link #admit admitted} before. */
    private CompletableFuture<RaftClientReply> proposeAdmitted(final Message message)
    {
        final CompletableFuture<RaftClientReply> reply = member.submitLocal(message);
        // A proposal that failed at once never reached Ratis: counted out without a reply, as before it was sent.
        return reply.whenComplete((r, error) -> ended(error == null ? r : null));
    }
}
