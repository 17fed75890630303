package io.sluice.gateway.backfill;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.List;

/**
 * One backfill as the gateway shows it, put together from every partition leader's tasks: the answer of a
 * started backfill (202), of {@code GET /actuator/backfills[/{id}]} and of a cancel.
 *
 * @param state                 PENDING, RUNNING, SUCCEEDED, FAILED or CANCELLED (see {@link BackfillViews}).
 * @param progress              positions exported over positions to export, 1.0 when there are none.
 * @param ratePerSecond         positions exported per second since the backfill was created.
 * @param unavailablePartitions partitions whose leader could not be asked: their tasks are missing here.
 * @param unavailable           in a start's answer, the ranges the log no longer held (compacted): not backfilled.
 */
@JsonPropertyOrder({"backfillId", "exporterId", "state", "progress", "ratePerSecond", "exportedPositions",
    "totalPositions", "createdAtMs", "updatedAtMs", "ranges", "tasks", "unavailablePartitions",
    "unavailable"})
public record BackfillView(
    String backfillId,
    String exporterId,
    String state,
    double progress,
    double ratePerSecond,
    long exportedPositions,
    long totalPositions,
    long createdAtMs,
    long updatedAtMs,
    List<Range> ranges,
    List<Task> tasks,
    List<Integer> unavailablePartitions,
    @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Range> unavailable)
{
    public BackfillView(
        final String backfillId, final String exporterId, final String state, final double progress,
        final double ratePerSecond, final long exportedPositions, final long totalPositions, final long createdAtMs,
        final long updatedAtMs, final List<Range> ranges, final List<Task> tasks, final List<Integer> unavailablePartitions)
    {
        this(backfillId, exporterId, state, progress, ratePerSecond, exportedPositions, totalPositions, createdAtMs,
            updatedAtMs, ranges, tasks, unavailablePartitions, List.of());
    }

    /** This view with the ranges a start could not plan because they were compacted. */
    public BackfillView withUnavailable(final List<Range> compacted)
    {
        return new BackfillView(backfillId, exporterId, state, progress, ratePerSecond, exportedPositions,
            totalPositions, createdAtMs, updatedAtMs, ranges, tasks, unavailablePartitions, List.copyOf(compacted));
    }

    /** The skipped range of one partition, inclusive. */
    @JsonPropertyOrder({"partitionId", "fromPosition", "toPosition"})
    public record Range(int partitionId, long fromPosition, long toPosition)
    {
    }

    @JsonPropertyOrder({"taskId", "partitionId", "state", "fromPosition", "toPosition", "exportedUpTo", "attempts",
        "progress", "failureReason"})
    public record Task(
        int taskId,
        int partitionId,
        String state,
        long fromPosition,
        long toPosition,
        long exportedUpTo,
        int attempts,
        double progress,
        @JsonInclude(JsonInclude.Include.NON_NULL) String failureReason)
    {
    }
}
