package io.sluice.gateway.backfill;

import java.util.ArrayList;
import java.util.List;

/**
 * How a backfill's tasks are shared out: across partitions by range length, and within a partition by
 * position. The within-partition split is the one the broker computes at apply time
 * ({@code io.sluice.broker.backfill.BackfillRanges}), so a plan shows the ranges the leaders will create when
 * nothing moved in between. Stateless.
 */
public final class BackfillTaskSplit
{
    private BackfillTaskSplit()
    {
    }

    /** An inclusive position range; empty when {@code toPosition < fromPosition}. */
    public record Range(long fromPosition, long toPosition)
    {
    }

    /**
     * Shares {@code taskCount} tasks among partitions with these (positive) range lengths: every partition gets
     * one, the rest go one at a time to the partition with the most positions per task (ties to the lower
     * index), and no partition gets more tasks than positions. So the result sums to
     * {@code min(taskCount, total positions)}.
     *
     * @throws IllegalArgumentException when {@code taskCount} is below the number of partitions.
     */
    public static int[] allocate(final long[] lengths, final int taskCount)
    {
        if (taskCount < lengths.length)
        {
            throw new IllegalArgumentException(
                taskCount + " tasks cannot cover " + lengths.length + " partitions with a skipped range");
        }
        final int[] tasks = new int[lengths.length];
        for (int i = 0; i < lengths.length; i++)
        {
            if (lengths[i] < 1)
            {
                throw new IllegalArgumentException("range length must be positive, was " + lengths[i]);
            }
            tasks[i] = 1;
        }
        for (int left = taskCount - lengths.length; left > 0; left--)
        {
            int best = -1;
            for (int i = 0; i < lengths.length; i++)
            {
                if (tasks[i] < lengths[i] &&
                    (best < 0 || (double)lengths[i] / tasks[i] > (double)lengths[best] / tasks[best]))
                {
                    best = i;
                }
            }
            if (best < 0)
            {
                break; // every partition has a task per position
            }
            tasks[best]++;
        }
        return tasks;
    }

    /**
     * Splits {@code (fromExclusive, toInclusive]} into {@code taskCount} contiguous ranges whose lengths differ
     * by at most one, the first ones taking the remainder; tasks beyond the positions get empty ranges.
     */
    public static List<Range> split(final long fromExclusive, final long toInclusive, final int taskCount)
    {
        if (taskCount < 1)
        {
            throw new IllegalArgumentException("taskCount must be at least 1, was " + taskCount);
        }
        final long length = Math.max(0, toInclusive - fromExclusive);
        final long base = length / taskCount;
        final long remainder = length % taskCount;
        final List<Range> ranges = new ArrayList<>(taskCount);
        long next = fromExclusive + 1;
        for (int i = 0; i < taskCount; i++)
        {
            final long size = base + (i < remainder ? 1 : 0);
            if (size == 0)
            {
                final long emptyFrom = Math.max(next, toInclusive + 1);
                ranges.add(new Range(emptyFrom, emptyFrom - 1));
            }
            else
            {
                ranges.add(new Range(next, next + size - 1));
                next += size;
            }
        }
        return ranges;
    }
}
