package io.sluice.testing;

import java.time.Duration;

/**
 * Lets time pass on purpose, for a test that then asserts something did <em>not</em> happen meanwhile (nothing
 * exported while paused, no leader moved, nothing appended by refused requests, a window ran out). The one place the
 * modules' tests wait a fixed time: anything that waits <em>for</em> something awaits it (Awaitility) instead. The qa
 * module's own {@code Await.quietPeriod} also logs and counts its periods.
 */
public final class QuietPeriod
{
    private QuietPeriod()
    {
    }

    /** Lets {@code length} pass; {@code why} names what must (not) happen meanwhile, for the reader. */
    public static void of(final Duration length, final String why)
    {
        try
        {
            Thread.sleep(length.toMillis());
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted during the quiet period: " + why, e);
        }
    }
}
