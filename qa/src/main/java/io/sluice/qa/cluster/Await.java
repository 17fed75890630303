package io.sluice.qa.cluster;

import java.time.Duration;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Bounded polling for the harness (tests use Awaitility). A condition that throws counts as not yet met;
 * the last failure is attached to the timeout error.
 */
public final class Await
{
    private static final Duration POLL_INTERVAL = Duration.ofMillis(200);

    private Await()
    {
    }

    public static void until(final String what, final Duration timeout, final BooleanSupplier condition)
    {
        value(what, timeout, () -> condition.getAsBoolean() ? Optional.of(Boolean.TRUE) : Optional.empty());
    }

    public static <T> T value(final String what, final Duration timeout, final Supplier<Optional<T>> probe)
    {
        return value(what, timeout, POLL_INTERVAL, probe);
    }

    /** As {@link #value(String, Duration, Supplier)}, polling every {@code interval}: for states that last under a second. */
    public static <T> T value(
        final String what, final Duration timeout, final Duration interval, final Supplier<Optional<T>> probe)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        RuntimeException lastFailure = null;
        while (true)
        {
            try
            {
                final Optional<T> value = probe.get();
                if (value.isPresent())
                {
                    return value.get();
                }
            }
            catch (final ChildExitedException ex)
            {
                throw ex;
            }
            catch (final RuntimeException ex)
            {
                lastFailure = ex;
            }
            if (System.nanoTime() - deadline >= 0)
            {
                final AssertionError error = new AssertionError("timed out after " + timeout + " waiting for " + what +
                    (lastFailure != null ? " (last failure: " + lastFailure + ")" : ""));
                if (lastFailure != null)
                {
                    error.initCause(lastFailure);
                }
                throw error;
            }
            sleep(interval);
        }
    }

    public static void sleep(final Duration duration)
    {
        try
        {
            Thread.sleep(duration.toMillis());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
    }
}
