package io.sluice.broker.raft;

import io.sluice.protocol.concurrent.Futures;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The one loop that tries a leadership transfer again within a bound, for every transfer the broker retries: a
 * requested rebalance (the preferred broker only, while it stays in sync), the controlled shutdown's handover of each
 * partition (any in-sync follower, waiting while one catches up, again if the leadership comes back) and of the
 * control group (each voter in turn). What differs is the {@link Plan}, asked before every round; the loop owns the
 * attempts, the waits between rounds and the bound. A transferee can decline the election Ratis asks it to start (it
 * had not heard from the leader yet, or the log moved on), and Ratis then only waits out the attempt: so attempts are
 * bounded and tried again.
 * <p>
 * Thread-safe: a run is a chain of futures, one round at a time; the plan is asked on the thread that ended the round
 * before.
 */
public final class TransferRetries
{
    /** What the plan decides before a round. */
    public sealed interface Step permits Transfer, Wait, Stop
    {
    }

    /** Try a transfer to {@code targetBrokerId} now. */
    public record Transfer(int targetBrokerId) implements Step
    {
    }

    /** Nobody to hand over to yet: ask again after the poll interval; {@code why} is the outcome if the bound passes. */
    public record Wait(String why) implements Step
    {
    }

    /** Done; {@code why} says how, or is null when the last attempt's outcome does. */
    public record Stop(String why) implements Step
    {
    }

    /**
     * One attempt that ended: its target, the leader after it (-1 when it failed), its failure (null when it
     * succeeded) and how long after the run's start it ended.
     */
    public record Attempted(int targetBrokerId, int leader, Throwable failure, long endedAfterNanos)
    {
        public boolean succeeded()
        {
            return failure == null;
        }
    }

    /** Decides the next round from the last attempt (null before the first) and the time left of the bound. */
    @FunctionalInterface
    public interface Plan
    {
        Step next(Attempted last, long remainingNanos);
    }

    /** One transfer attempt to {@code targetBrokerId}, bounded by {@code remainingNanos}; completes with the leader. */
    @FunctionalInterface
    public interface Attempt
    {
        CompletableFuture<Integer> run(int targetBrokerId, long remainingNanos);
    }

    /**
     * How a run ended: its last attempt (null when none ran), whether any attempt moved the leadership, and why it
     * stopped when the plan said (or the bound passed while it waited).
     */
    public record Outcome(Attempted last, boolean transferred, String why)
    {
    }

    private final Plan plan;
    private final Attempt attempt;
    private final long deadlineNanos;
    private final long pollMs;
    private final LongSupplier nanoClock;
    private final long startNanos;
    private final CompletableFuture<Outcome> outcome = new CompletableFuture<>();
    private volatile Attempted last;
    private volatile boolean transferred;

    private TransferRetries(
        final Plan plan, final Attempt attempt, final long deadlineNanos, final long pollMs, final LongSupplier nanoClock)
    {
        this.plan = plan;
        this.attempt = attempt;
        this.deadlineNanos = deadlineNanos;
        this.pollMs = pollMs;
        this.nanoClock = nanoClock;
        this.startNanos = nanoClock.getAsLong();
    }

    /**
     * Runs rounds until the plan stops or {@code deadlineNanos} (on {@code nanoClock}) passes; a plan that waits is
     * asked again every {@code pollMs}. Never fails: a failed attempt is the next round's {@code last}.
     */
    public static CompletableFuture<Outcome> run(
        final Plan plan, final Attempt attempt, final long deadlineNanos, final long pollMs, final LongSupplier nanoClock)
    {
        final TransferRetries run = new TransferRetries(plan, attempt, deadlineNanos, pollMs, nanoClock);
        run.round(null);
        return run.outcome;
    }

    private void round(final String waitingFor)
    {
        final long remainingNanos = deadlineNanos - nanoClock.getAsLong();
        final Step step;
        try
        {
            step = remainingNanos <= 0 ? new Stop(waitingFor) : plan.next(last, remainingNanos);
        }
        catch (final RuntimeException e)
        {
            outcome.completeExceptionally(e);
            return;
        }
        if (step instanceof Transfer transfer)
        {
            attempt(transfer.targetBrokerId(), remainingNanos).whenComplete((leader, error) ->
            {
                last = new Attempted(transfer.targetBrokerId(), error == null ? leader : -1,
                    error == null ? null : Futures.unwrapAll(error), nanoClock.getAsLong() - startNanos);
                transferred |= error == null;
                round(null);
            });
        }
        else if (step instanceof Wait wait)
        {
            CompletableFuture.runAsync(() -> round(wait.why()),
                CompletableFuture.delayedExecutor(pollMs, TimeUnit.MILLISECONDS));
        }
        else
        {
            outcome.complete(new Outcome(last, transferred, ((Stop)step).why()));
        }
    }

    private CompletableFuture<Integer> attempt(final int targetBrokerId, final long remainingNanos)
    {
        try
        {
            return attempt.run(targetBrokerId, remainingNanos);
        }
        catch (final RuntimeException e)
        {
            return CompletableFuture.failedFuture(e);
        }
    }
}
