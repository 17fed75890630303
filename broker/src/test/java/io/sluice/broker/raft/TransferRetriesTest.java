package io.sluice.broker.raft;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(10)
class TransferRetriesTest
{
    private static final long BOUND_NANOS = TimeUnit.SECONDS.toNanos(5);

    @Test
    void aFailedAttemptIsTriedAgainAsThePlanSaysUntilOneMovesTheLeadership()
    {
        final List<Integer> targets = new ArrayList<>();
        final TransferRetries.Plan plan = (last, remaining) -> last != null && last.succeeded() ?
            new TransferRetries.Stop(null) : new TransferRetries.Transfer(targets.size() < 2 ? 1 : 2);
        final TransferRetries.Attempt attempt = (target, remaining) ->
        {
            targets.add(target);
            return target == 1 ? CompletableFuture.failedFuture(new IllegalStateException("declined by " + target)) :
                CompletableFuture.completedFuture(target);
        };

        final TransferRetries.Outcome outcome = run(plan, attempt);

        assertThat(targets).containsExactly(1, 1, 2);
        assertThat(outcome.transferred()).isTrue();
        assertThat(outcome.last().succeeded()).isTrue();
        assertThat(outcome.last().leader()).isEqualTo(2);
        assertThat(outcome.why()).isNull();
    }

    @Test
    void thePlansStopEndsTheRunWithItsReasonAndTheLastFailure()
    {
        final TransferRetries.Plan plan = (last, remaining) -> last == null ? new TransferRetries.Transfer(3) :
            new TransferRetries.Stop("out of sync");
        // An attempt that throws instead of failing its future is a failed attempt too.
        final TransferRetries.Attempt attempt = (target, remaining) ->
        {
            throw new IllegalStateException("no such peer " + target);
        };

        final TransferRetries.Outcome outcome = run(plan, attempt);

        assertThat(outcome.transferred()).isFalse();
        assertThat(outcome.why()).isEqualTo("out of sync");
        assertThat(outcome.last().targetBrokerId()).isEqualTo(3);
        assertThat(outcome.last().leader()).isEqualTo(-1);
        assertThat(outcome.last().failure()).hasMessage("no such peer 3");
    }

    @Test
    void aPlanThatWaitsIsAskedAgainAndEndsAtTheBoundWithWhatItWaitedFor()
    {
        final List<Long> asked = new ArrayList<>();
        final TransferRetries.Plan plan = (last, remaining) ->
        {
            asked.add(remaining);
            return new TransferRetries.Wait("waiting for a follower to catch up");
        };

        final TransferRetries.Outcome outcome = TransferRetries.run(plan, (target, remaining) ->
            CompletableFuture.completedFuture(target), System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100), 5,
            System::nanoTime).join();

        assertThat(asked).hasSizeGreaterThan(1);
        assertThat(asked).isSortedAccordingTo((a, b) -> Long.compare(b, a));
        assertThat(outcome.last()).isNull();
        assertThat(outcome.transferred()).isFalse();
        assertThat(outcome.why()).isEqualTo("waiting for a follower to catch up");
    }

    @Test
    void anAttemptIsGivenWhatIsLeftOfTheBound()
    {
        final List<Long> given = new ArrayList<>();
        final TransferRetries.Plan plan = (last, remaining) -> last == null ? new TransferRetries.Transfer(1) :
            new TransferRetries.Stop(null);

        run(plan, (target, remaining) ->
        {
            given.add(remaining);
            return CompletableFuture.completedFuture(target);
        });

        assertThat(given).hasSize(1);
        assertThat(given.get(0)).isPositive().isLessThanOrEqualTo(BOUND_NANOS);
    }

    private static TransferRetries.Outcome run(final TransferRetries.Plan plan, final TransferRetries.Attempt attempt)
    {
        return TransferRetries.run(plan, attempt, System.nanoTime() + BOUND_NANOS, 1, System::nanoTime).join();
    }
}
