package io.sluice.cli;

import java.time.Duration;

/** Short human forms of durations for messages: {@code 250ms}, {@code 30s}, {@code 1m05s}. */
final class Durations
{
    private Durations()
    {
    }

    static String format(final Duration duration)
    {
        final long millis = duration.toMillis();
        if (millis < 1000)
        {
            return millis + "ms";
        }
        if (millis % 1000 != 0 && millis < 10_000)
        {
            return String.format("%.1fs", millis / 1000.0);
        }
        final long seconds = duration.toSeconds();
        if (seconds < 60)
        {
            return seconds + "s";
        }
        if (seconds < 3600)
        {
            return String.format("%dm%02ds", seconds / 60, seconds % 60);
        }
        return String.format("%dh%02dm", seconds / 3600, (seconds % 3600) / 60);
    }
}
