package io.sluice.broker.backfill;

/**
 * A replicated change of a partition's backfill state: the payload of one Raft log entry, applied by
 * {@link BackfillRegistry#apply} on every replica in log order. Timestamps are chosen by the proposing
 * leader, so applying reads no clock and every replica reaches the same state.
 */
public sealed interface BackfillEntry
{
    /** Stable type code, written in the entry's encoding. */
    int typeCode();

    /**
     * Reset the exporter to {@code latestPosition}, the partition's last position when the leader proposed the
     * entry, and register the backfill of the skipped range (exporter's acked position, latest position], split
     * into {@code taskCount} tasks numbered from {@code firstTaskId}. The latest position travels in the entry
     * because a replica applying it again after a restart already holds later records in its record log: a
     * range taken from the applying state would differ between replicas and between restarts.
     * {@link #LATEST_AT_APPLY} (entries written before the field existed) takes the applying state's last position.
     */
    record Register(
        String backfillId, String exporterId, int taskCount, int firstTaskId, long timestampMs, long latestPosition)
        implements BackfillEntry
    {
        public static final int TYPE = 1;
        public static final long LATEST_AT_APPLY = -1;

        /** A registration whose range ends at the applying replica's last position. */
        public Register(
            final String backfillId, final String exporterId, final int taskCount, final int firstTaskId, final long timestampMs)
        {
            this(backfillId, exporterId, taskCount, firstTaskId, timestampMs, LATEST_AT_APPLY);
        }

        public int typeCode()
        {
            return TYPE;
        }
    }

    /** A runner on the leader starts an attempt of the task (counted across leaders). */
    record AttemptStarted(String backfillId, int taskId, long timestampMs) implements BackfillEntry
    {
        public static final int TYPE = 2;

        public int typeCode()
        {
            return TYPE;
        }
    }

    /**
     * Every position up to {@code exportedUpTo} is durably exported by the task. Reaching the task's last
     * position completes it.
     */
    record Checkpoint(String backfillId, int taskId, long exportedUpTo, long timestampMs) implements BackfillEntry
    {
        public static final int TYPE = 3;

        public int typeCode()
        {
            return TYPE;
        }
    }

    /** An attempt failed; {@code giveUp} ends the task FAILED, otherwise it waits PENDING for the next attempt. */
    record AttemptFailed(String backfillId, int taskId, String reason, boolean giveUp, long timestampMs)
        implements BackfillEntry
    {
        public static final int TYPE = 4;

        public int typeCode()
        {
            return TYPE;
        }
    }

    /** Cancel every unfinished task of the backfill on this partition. */
    record Cancel(String backfillId, long timestampMs) implements BackfillEntry
    {
        public static final int TYPE = 5;

        public int typeCode()
        {
            return TYPE;
        }
    }
}
