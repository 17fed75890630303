package io.sluice.gateway.backfill;

/**
 * How a backfill's tasks are shared out: across partitions by range length, and within a partition by
 * position ({@link io.sluice.protocol.backfill.BackfillRanges}, the split the broker computes at apply time).
 * Stateless.
 */
public final class BackfillTaskSplit
{
    private BackfillTaskSplit()
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
}
