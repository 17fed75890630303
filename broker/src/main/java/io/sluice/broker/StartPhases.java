package io.sluice.broker;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a broker's start goes (issue 30), logged as one line once it serves: each step's end in milliseconds since
 * {@link Broker#start} began, and how long the process had run by then (the JVM and Spring before it). Not
 * thread-safe: one start's thread marks it.
 */
final class StartPhases
{
    private final long startNs;
    private final long processUptimeAtStartMs;
    private final List<String> marks = new ArrayList<>();

    StartPhases(final long startNs)
    {
        this.startNs = startNs;
        this.processUptimeAtStartMs = processUptimeMs() - (System.nanoTime() - startNs) / 1_000_000;
    }

    /** Notes that {@code step} ended now. */
    void mark(final String step)
    {
        marks.add(step + " " + (System.nanoTime() - startNs) / 1_000_000 + " ms");
    }

    @Override
    public String toString()
    {
        return "process running " + processUptimeAtStartMs + " ms before it; then " + String.join(", ", marks);
    }

    private static long processUptimeMs()
    {
        try
        {
            return ManagementFactory.getRuntimeMXBean().getUptime();
        }
        catch (final RuntimeException | LinkageError e)
        {
            return -1;
        }
    }
}
