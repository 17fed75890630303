package io.sluice.protocol.concurrent;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

class FuturesTest
{
    @Test
    void unwrapTakesTheFailureOutOfTheCompletionExceptionJoinThrows()
    {
        final IllegalStateException failure = new IllegalStateException("refused");
        final Throwable joined = catchThrowable(() -> CompletableFuture.failedFuture(failure).thenApply((v) -> v).join());

        assertThat(joined).isInstanceOf(CompletionException.class);
        assertThat(Futures.unwrap(joined)).isSameAs(failure);
        assertThat(Futures.unwrap(failure)).isSameAs(failure);
    }

    @Test
    void unwrapTakesOffOneCompletionExceptionAndNothingElse()
    {
        final TimeoutException timeout = new TimeoutException("late");
        final ExecutionException execution = new ExecutionException(timeout);

        assertThat(Futures.unwrap(new CompletionException(execution))).isSameAs(execution);
        assertThat(Futures.unwrap(execution)).isSameAs(execution);
    }

    @Test
    void unwrapAllFindsTheCauseUnderNestedCompletionAndExecutionExceptions()
    {
        final TimeoutException timeout = new TimeoutException("no answer");

        assertThat(Futures.unwrapAll(new CompletionException(new ExecutionException(new CompletionException(timeout)))))
            .isSameAs(timeout);
        assertThat(Futures.unwrapAll(timeout)).isSameAs(timeout);
    }

    @Test
    void aWrapperWithoutACauseIsItsOwnFailure()
    {
        final CompletionException empty = new CompletionException("nothing inside", null);

        assertThat(Futures.unwrap(empty)).isSameAs(empty);
        assertThat(Futures.unwrapAll(empty)).isSameAs(empty);
        assertThat(Futures.unwrapAll(new ExecutionException(empty))).isSameAs(empty);
    }
}
