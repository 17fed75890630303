package io.sluice.gateway.backfill;

import io.sluice.protocol.codecs.BackfillState;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Puts the tasks of one backfill, reported by several leaders, together into a {@link BackfillView}.
 * <p>
 * The backfill's state: SUCCEEDED when every task succeeded (or it has none); once every task is finished,
 * FAILED if any failed, else CANCELLED; while some are unfinished, RUNNING if any runs, else PENDING (e.g.
 * every unfinished task waits for a resume or a retry).
 */
final class BackfillViews
{
    private BackfillViews()
    {
    }

    static String stateOf(final List<BackfillTaskStatus> tasks)
    {
        boolean unfinished = false;
        boolean running = false;
        boolean failed = false;
        boolean cancelled = false;
        for (final BackfillTaskStatus task : tasks)
        {
            switch (task.state())
            {
                case RUNNING -> { unfinished = true; running = true; }
                case PENDING -> unfinished = true;
                case FAILED -> failed = true;
                case CANCELLED -> cancelled = true;
                default -> { }
            }
        }
        if (unfinished)
        {
            return running ? BackfillState.RUNNING.name() : BackfillState.PENDING.name();
        }
        return failed ? BackfillState.FAILED.name() :
            cancelled ? BackfillState.CANCELLED.name() : BackfillState.SUCCEEDED.name();
    }

    static BackfillView of(
        final String backfillId, final String exporterId, final List<BackfillTaskStatus> reported,
        final List<Integer> unavailablePartitions, final long nowMs)
    {
        final List<BackfillTaskStatus> tasks = new ArrayList<>(reported);
        tasks.sort(Comparator.comparingInt(BackfillTaskStatus::taskId).thenComparingInt(BackfillTaskStatus::partitionId));
        final Map<Integer, long[]> ranges = new TreeMap<>();
        final List<BackfillView.Task> views = new ArrayList<>(tasks.size());
        long exported = 0;
        long total = 0;
        long createdAtMs = Long.MAX_VALUE;
        long updatedAtMs = 0;
        String exporter = exporterId;
        for (final BackfillTaskStatus task : tasks)
        {
            exported += task.exportedLength();
            total += task.rangeLength();
            createdAtMs = Math.min(createdAtMs, task.createdAtMs());
            updatedAtMs = Math.max(updatedAtMs, task.updatedAtMs());
            exporter = exporter == null ? task.exporterId() : exporter;
            if (task.rangeLength() > 0)
            {
                ranges.merge(task.partitionId(), new long[] {task.fromPosition(), task.toPosition()},
                    (a, b) -> new long[] {Math.min(a[0], b[0]), Math.max(a[1], b[1])});
            }
            views.add(new BackfillView.Task(task.taskId(), task.partitionId(), task.state().name(),
                task.fromPosition(), task.toPosition(), task.exportedUpTo(), task.attempts(),
                task.rangeLength() == 0 ? 1.0 : (double)task.exportedLength() / task.rangeLength(),
                task.failureReason()));
        }
        final List<BackfillView.Range> rangeViews = new ArrayList<>(ranges.size());
        ranges.forEach((partitionId, range) -> rangeViews.add(new BackfillView.Range(partitionId, range[0], range[1])));
        final String state = stateOf(tasks);
        final boolean finished = !state.equals(BackfillState.RUNNING.name()) && !state.equals(BackfillState.PENDING.name());
        if (tasks.isEmpty())
        {
            createdAtMs = nowMs;
            updatedAtMs = nowMs;
        }
        final long elapsedMs = (finished ? updatedAtMs : Math.max(nowMs, updatedAtMs)) - createdAtMs;
        final double rate = elapsedMs > 0 ? exported * 1000.0 / elapsedMs : 0.0;
        return new BackfillView(backfillId, exporter, state, total == 0 ? 1.0 : (double)exported / total, rate,
            exported, total, createdAtMs, updatedAtMs, List.copyOf(rangeViews), List.copyOf(views),
            List.copyOf(unavailablePartitions));
    }
}
