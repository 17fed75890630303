package io.sluice.broker.backfill;

import io.sluice.protocol.backfill.BackfillRanges;
import java.util.Objects;

/**
 * One backfill task of one partition, as held in the partition's replicated state. Immutable: every
 * transition returns a new value, so readers on other threads (runners, status requests) always see a
 * consistent task.
 *
 * @param backfillId    the backfill this task belongs to (chosen by the gateway).
 * @param exporterId    the exporter whose skipped range the task exports.
 * @param taskId        unique within the backfill.
 * @param fromPosition  first position of the task's range, inclusive.
 * @param toPosition    last position of the task's range, inclusive; below {@code fromPosition} when empty.
 * @param exportedUpTo  checkpoint: every position up to here is durably exported; {@code fromPosition - 1} at start.
 * @param attempts      attempts started so far, over every leader.
 * @param failureReason why the last attempt failed, or empty.
 */
public record BackfillTask(
    String backfillId,
    String exporterId,
    int taskId,
    long fromPosition,
    long toPosition,
    long exportedUpTo,
    int attempts,
    BackfillTaskState state,
    String failureReason,
    long createdAtMs,
    long updatedAtMs)
{
    public BackfillTask
    {
        Objects.requireNonNull(backfillId, "backfillId");
        Objects.requireNonNull(exporterId, "exporterId");
        Objects.requireNonNull(state, "state");
        failureReason = failureReason == null ? "" : failureReason;
    }

    /** A new task: SUCCEEDED at once when its range is empty, else PENDING. */
    static BackfillTask create(
        final String backfillId, final String exporterId, final int taskId, final BackfillRanges.Range range,
        final long nowMs)
    {
        return new BackfillTask(backfillId, exporterId, taskId, range.fromPosition(), range.toPosition(),
            range.fromPosition() - 1, 0, range.isEmpty() ? BackfillTaskState.SUCCEEDED : BackfillTaskState.PENDING,
            "", nowMs, nowMs);
    }

    public TaskKey key()
    {
        return new TaskKey(backfillId, taskId);
    }

    public boolean isFinished()
    {
        return state.isTerminal();
    }

    /** Positions in the range. */
    public long rangeLength()
    {
        return Math.max(0, toPosition - fromPosition + 1);
    }

    /** Next position this task must export. */
    public long nextPosition()
    {
        return exportedUpTo + 1;
    }

    /** Fraction of the range exported, 1.0 for an empty range. */
    public double progress()
    {
        final long length = rangeLength();
        return length == 0 ? 1.0 : (double)Math.min(length, exportedUpTo - fromPosition + 1) / length;
    }

    /**
     * The state to report: an unfinished task reads PENDING while its partition's exporting is paused,
     * because no attempt can make progress then.
     */
    public BackfillTaskState reportedState(final boolean exportingPaused)
    {
        return exportingPaused && !state.isTerminal() ? BackfillTaskState.PENDING : state;
    }

    BackfillTask with(
        final long exportedUpTo, final int attempts, final BackfillTaskState state, final String failureReason,
        final long updatedAtMs)
    {
        return new BackfillTask(backfillId, exporterId, taskId, fromPosition, toPosition, exportedUpTo, attempts,
            state, failureReason, createdAtMs, updatedAtMs);
    }

    /** Identity of a task within a partition. */
    public record TaskKey(String backfillId, int taskId)
    {
        @Override
        public String toString()
        {
            return "backfill " + backfillId + " task " + taskId;
        }
    }
}
