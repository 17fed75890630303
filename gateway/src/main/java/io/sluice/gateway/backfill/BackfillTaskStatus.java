package io.sluice.gateway.backfill;

import io.sluice.protocol.codecs.BackfillState;

/**
 * One backfill task as its partition's leader reported it. Positions are inclusive; the range is empty when
 * {@code toPosition < fromPosition}; {@code exportedUpTo} is the replicated checkpoint.
 */
public record BackfillTaskStatus(
    int partitionId,
    String backfillId,
    String exporterId,
    int taskId,
    BackfillState state,
    long fromPosition,
    long toPosition,
    long exportedUpTo,
    int attempts,
    long createdAtMs,
    long updatedAtMs,
    String failureReason)
{
    public boolean isFinished()
    {
        return state == BackfillState.SUCCEEDED || state == BackfillState.FAILED || state == BackfillState.CANCELLED;
    }

    public long rangeLength()
    {
        return Math.max(0, toPosition - fromPosition + 1);
    }

    /** Positions of the range exported so far. */
    public long exportedLength()
    {
        return Math.max(0, Math.min(toPosition, exportedUpTo) - fromPosition + 1);
    }
}
