package io.sluice.protocol.concurrent;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** The failure behind a future's exception, for every module that reports or classifies one. */
public final class Futures
{
    private Futures()
    {
    }

    /**
     * The failure a {@link CompletionException} carries (what {@code join()} and the stages after a failed one wrap
     * it in), or {@code failure} itself when it is not one or carries nothing.
     */
    public static Throwable unwrap(final Throwable failure)
    {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /**
     * The failure under every {@link CompletionException} and {@link ExecutionException} around it, for callers that
     * may be handed either (from {@code join()} or {@code get()}), possibly one inside the other.
     */
    public static Throwable unwrapAll(final Throwable failure)
    {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null)
        {
            cause = cause.getCause();
        }
        return cause;
    }
}
