package io.sluice.qa.cluster;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Bounded polling for the harness and the qa tests. A condition that throws counts as not yet met; the last failure
 * is attached to the timeout error.
 * <p>
 * Waiting for something is {@link #until} or {@link #value}. Letting time pass on purpose (a lease runs out, "nothing
 * is exported for 2 s", a broker stays down for 3 s under load) is {@link #quietPeriod}, the one place for it, so
 * every such period is named, logged and counted. {@link #sleep} is left for the pause between polls or retries.
 */
public final class Await
{
    private static final Duration POLL_INTERVAL = Duration.ofMillis(200);
    private static final AtomicLong QUIET_PERIODS = new AtomicLong();
    private static final AtomicLong QUIET_MILLIS = new AtomicLong();

    private Await()
    {
    }

    public static void until(final String what, final Duration timeout, final BooleanSupplier condition)
    {
        value(what, timeout, () -> condition.getAsBoolean() ? Optional.of(Boolean.TRUE) : Optional.empty());
    }

    /**
     * As {@link #until(String, Duration, BooleanSupplier)}; on timeout the error also says what {@code state} reads
     * then (what was seen last, what is still missing), so a red run tells why without a rerun.
     */
    public static void until(
        final String what, final Duration timeout, final BooleanSupplier condition, final Supplier<String> state)
    {
        try
        {
            until(what, timeout, condition);
        }
        catch (final AssertionError e)
        {
            throw new AssertionError(e.getMessage() + "; " + state.get(), e);
        }
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

    /**
     * A deliberate quiet period: {@code duration} passes, nothing is awaited. {@code why} says what it is for; it is
     * logged with the running count and total of this JVM's quiet periods.
     */
    public static void quietPeriod(final String why, final Duration duration)
    {
        quietPeriod(why, duration, Duration.ZERO, () -> { });
    }

    /**
     * A deliberate quiet period over which {@code check} must keep holding: run at its start, every {@code interval}
     * (when positive) and at its end; its failure ends the period at once.
     */
    public static void quietPeriod(final String why, final Duration duration, final Duration interval, final Runnable check)
    {
        final long count = QUIET_PERIODS.incrementAndGet();
        final long total = QUIET_MILLIS.addAndGet(duration.toMillis());
        System.out.println("[sluice-qa] quiet period " + count + " (" + total + " ms so far): " + duration.toMillis() +
            " ms, " + why);
        final long end = System.nanoTime() + duration.toNanos();
        check.run();
        while (true)
        {
            final long left = end - System.nanoTime();
            if (left <= 0)
            {
                break;
            }
            sleep(interval.isZero() || interval.isNegative() ? Duration.ofNanos(left) :
                Duration.ofNanos(Math.min(left, interval.toNanos())));
            check.run();
        }
    }

    public static void sleep(final Duration duration)
    {
        try
        {
            Thread.sleep(duration.toMillis(), (int)(duration.toNanos() % 1_000_000));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
    }
}
