package io.sluice.protocol.backfill;

import java.util.ArrayList;
import java.util.List;

/**
 * Deterministic split of a skipped range into task sub-ranges. Every replica computes the same split from
 * the same inputs, so the split itself need not be replicated; the gateway plans a dry run with the same
 * function, so a plan shows the ranges the leaders will create when nothing moved in between.
 */
public final class BackfillRanges
{
    private BackfillRanges()
    {
    }

    /** An inclusive range of positions; empty when {@code fromPosition > toPosition}. */
    public record Range(long fromPosition, long toPosition)
    {
        public long length()
        {
            return Math.max(0, toPosition - fromPosition + 1);
        }

        public boolean isEmpty()
        {
            return fromPosition > toPosition;
        }
    }

    /**
     * Splits the skipped range {@code (fromExclusive, toInclusive]} into {@code taskCount} contiguous
     * sub-ranges in position order. Lengths differ by at most one (the first ones take the remainder). When
     * the range holds fewer positions than tasks, the trailing tasks get empty ranges that start right after
     * the end, so every task has a well-defined (possibly empty) range.
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
