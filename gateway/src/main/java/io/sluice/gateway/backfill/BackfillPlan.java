package io.sluice.gateway.backfill;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.List;

/**
 * What a reset and backfill would do, from the gateway's latest picture of the cluster: the answer of a dry
 * run. The leaders compute the real ranges when they apply the reset, so records committed in between make
 * the real ranges end later.
 *
 * @param backfillTaskCount tasks in the plan (may be below the number asked for when ranges are shorter).
 * @param unavailable       per partition, the part of the skipped range the log no longer holds (compacted): never
 *                          backfilled, and no task fails for it (issue 29).
 */
@JsonPropertyOrder({"dryRun", "exporterId", "backfillTaskCount", "partitions", "ranges", "tasks", "unavailable"})
public record BackfillPlan(
    boolean dryRun,
    String exporterId,
    int backfillTaskCount,
    List<Partition> partitions,
    List<BackfillView.Range> ranges,
    List<Task> tasks,
    List<BackfillView.Range> unavailable)
{
    /**
     * One partition: the exporter's position now ({@code oldPosition}), where the reset moves it
     * ({@code newPosition}), the skipped range and the tasks that share it.
     */
    @JsonPropertyOrder({"partitionId", "leaderId", "oldPosition", "newPosition", "fromPosition", "toPosition",
        "taskCount", "firstTaskId"})
    public record Partition(
        int partitionId, int leaderId, long oldPosition, long newPosition, long fromPosition, long toPosition,
        int taskCount, int firstTaskId)
    {
        public boolean hasRange()
        {
            return toPosition >= fromPosition && newPosition > oldPosition;
        }
    }

    @JsonPropertyOrder({"taskId", "partitionId", "fromPosition", "toPosition"})
    public record Task(int taskId, int partitionId, long fromPosition, long toPosition)
    {
    }
}
