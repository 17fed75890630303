package io.sluice.qa.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/** Small statistics for benchmark samples. */
public final class Stats
{
    private Stats()
    {
    }

    /** Median of the samples (mean of the middle two for an even count). */
    public static double median(final double... samples)
    {
        if (samples.length == 0)
        {
            throw new IllegalArgumentException("no samples");
        }
        final double[] sorted = samples.clone();
        Arrays.sort(sorted);
        final int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    /** The p-th percentile (0..100) of nanosecond samples, nearest rank. */
    public static long percentile(final long[] samples, final double p)
    {
        if (samples.length == 0)
        {
            throw new IllegalArgumentException("no samples");
        }
        final long[] sorted = samples.clone();
        Arrays.sort(sorted);
        final int rank = (int)Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    /** CPU time of every live thread of this JVM, in nanoseconds (-1 when the JVM cannot tell). */
    public static long processCpuNs()
    {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        if (!threads.isThreadCpuTimeSupported())
        {
            return -1;
        }
        long total = 0;
        for (final long id : threads.getAllThreadIds())
        {
            final long cpu = threads.getThreadCpuTime(id);
            total += Math.max(0, cpu);
        }
        return total;
    }

    /** Operations per second. */
    public static double perSecond(final long operations, final long elapsedNs)
    {
        return operations * 1e9 / Math.max(1, elapsedNs);
    }
}
