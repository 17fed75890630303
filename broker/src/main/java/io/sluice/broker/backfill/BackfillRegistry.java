package io.sluice.broker.backfill;

import io.sluice.protocol.backfill.BackfillRanges;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The backfill part of one partition's replicated state: every task of every backfill registered on the
 * partition, with its range, checkpoint, attempts and state.
 * <p>
 * Changed only by {@link #register} and {@link #apply}, called by the partition's state machine in log
 * order; both are deterministic (no clock, no randomness), so every replica holds the same tasks. Finished
 * backfills beyond the newest {@value #RETAINED_FINISHED_BACKFILLS} are dropped when a new one registers.
 * <p>
 * Thread-safe: the state machine applies while runners and status requests read; tasks are immutable values.
 */
public final class BackfillRegistry
{
    /** Upper bound of a partition's task count in one registration (the gateway's maximum is lower). */
    public static final int MAX_TASKS_PER_PARTITION = 1024;
    /** Finished backfills kept for status queries. */
    public static final int RETAINED_FINISHED_BACKFILLS = 32;

    private final Map<BackfillTask.TaskKey, BackfillTask> tasks = new LinkedHashMap<>();
    private volatile Runnable changeListener = () -> {};

    /** Called on the applying thread after every change (e.g. the supervisor reconciling runners). Keep it quick. */
    public void changeListener(final Runnable listener)
    {
        this.changeListener = listener == null ? () -> {} : listener;
    }

    /** Result of a registration; {@code newExporterPosition} is meaningful only when APPLIED. */
    public record Registration(BackfillApplyOutcome outcome, List<BackfillTask> tasks, long newExporterPosition,
        String message)
    {
    }

    /**
     * Applies a {@link BackfillEntry.Register}: splits (exporterPosition, lastPosition] into the entry's tasks.
     * On APPLIED the caller must set the exporter's position to {@code newExporterPosition} IN THE SAME apply
     * (same log entry), so the reset and the backfill are one atomic replicated step. On any other outcome
     * nothing changed and the exporter's position must stay.
     *
     * @param exporterPosition the exporter's acknowledged position on this partition at apply time.
     * @param lastPosition     the partition's last committed record position at apply time.
     */
    public Registration register(
        final BackfillEntry.Register entry, final long exporterPosition, final long lastPosition)
    {
        final Registration registration;
        synchronized (this)
        {
            registration = registerLocked(entry, exporterPosition, lastPosition);
        }
        if (registration.outcome() == BackfillApplyOutcome.APPLIED)
        {
            changeListener.run();
        }
        return registration;
    }

    private Registration registerLocked(
        final BackfillEntry.Register entry, final long exporterPosition, final long lastPosition)
    {
        final List<BackfillTask> existing = tasksOfLocked(entry.backfillId());
        if (!existing.isEmpty())
        {
            return new Registration(BackfillApplyOutcome.DUPLICATE, existing, exporterPosition,
                "backfill " + entry.backfillId() + " is already registered");
        }
        if (entry.taskCount() < 1 || entry.taskCount() > MAX_TASKS_PER_PARTITION)
        {
            return new Registration(BackfillApplyOutcome.INVALID_ARGUMENT, List.of(), exporterPosition,
                "task count must be 1.." + MAX_TASKS_PER_PARTITION + ", was " + entry.taskCount());
        }
        if (entry.exporterId().isEmpty() || entry.backfillId().isEmpty())
        {
            return new Registration(BackfillApplyOutcome.INVALID_ARGUMENT, List.of(), exporterPosition,
                "backfill id and exporter id must not be empty");
        }
        for (final BackfillTask task : tasks.values())
        {
            if (!task.isFinished() && task.exporterId().equals(entry.exporterId()))
            {
                return new Registration(BackfillApplyOutcome.CONFLICT, List.of(), exporterPosition,
                    "exporter " + entry.exporterId() + " has an unfinished backfill " + task.backfillId());
            }
        }
        pruneFinishedLocked();
        final long newPosition = Math.max(exporterPosition, lastPosition);
        final List<BackfillRanges.Range> ranges = BackfillRanges.split(exporterPosition, newPosition, entry.taskCount());
        final List<BackfillTask> created = new ArrayList<>(ranges.size());
        for (int i = 0; i < ranges.size(); i++)
        {
            final BackfillTask task = BackfillTask.create(
                entry.backfillId(), entry.exporterId(), entry.firstTaskId() + i, ranges.get(i), entry.timestampMs());
            tasks.put(task.key(), task);
            created.add(task);
        }
        return new Registration(BackfillApplyOutcome.APPLIED, List.copyOf(created), newPosition,
            "registered " + created.size() + " tasks over (" + exporterPosition + ", " + newPosition + "]");
    }

    /** Applies any entry but a registration (see {@link #register}). */
    public BackfillApplyOutcome apply(final BackfillEntry entry)
    {
        if (entry instanceof BackfillEntry.Register)
        {
            throw new IllegalArgumentException("a registration needs positions: use register(..)");
        }
        final BackfillApplyOutcome outcome;
        synchronized (this)
        {
            outcome = applyLocked(entry);
        }
        if (outcome == BackfillApplyOutcome.APPLIED)
        {
            changeListener.run();
        }
        return outcome;
    }

    private BackfillApplyOutcome applyLocked(final BackfillEntry entry)
    {
        if (entry instanceof BackfillEntry.Cancel cancel)
        {
            boolean any = false;
            boolean changed = false;
            for (final Map.Entry<BackfillTask.TaskKey, BackfillTask> e : tasks.entrySet())
            {
                final BackfillTask task = e.getValue();
                if (task.backfillId().equals(cancel.backfillId()))
                {
                    any = true;
                    if (!task.isFinished())
                    {
                        e.setValue(task.with(task.exportedUpTo(), task.attempts(), BackfillTaskState.CANCELLED,
                            task.failureReason(), cancel.timestampMs()));
                        changed = true;
                    }
                }
            }
            return !any ? BackfillApplyOutcome.UNKNOWN :
                changed ? BackfillApplyOutcome.APPLIED : BackfillApplyOutcome.INVALID_TRANSITION;
        }

        final BackfillTask.TaskKey key;
        if (entry instanceof BackfillEntry.AttemptStarted a)
        {
            key = new BackfillTask.TaskKey(a.backfillId(), a.taskId());
        }
        else if (entry instanceof BackfillEntry.Checkpoint c)
        {
            key = new BackfillTask.TaskKey(c.backfillId(), c.taskId());
        }
        else if (entry instanceof BackfillEntry.AttemptFailed f)
        {
            key = new BackfillTask.TaskKey(f.backfillId(), f.taskId());
        }
        else
        {
            throw new IllegalArgumentException("unexpected backfill entry " + entry);
        }
        final BackfillTask task = tasks.get(key);
        if (task == null)
        {
            return BackfillApplyOutcome.UNKNOWN;
        }
        if (task.isFinished())
        {
            return BackfillApplyOutcome.INVALID_TRANSITION;
        }
        final BackfillTask next;
        if (entry instanceof BackfillEntry.AttemptStarted a)
        {
            next = task.with(task.exportedUpTo(), task.attempts() + 1, BackfillTaskState.RUNNING,
                task.failureReason(), a.timestampMs());
        }
        else if (entry instanceof BackfillEntry.Checkpoint c)
        {
            if (c.exportedUpTo() > task.toPosition() || c.exportedUpTo() < task.fromPosition() - 1)
            {
                return BackfillApplyOutcome.INVALID_ARGUMENT;
            }
            if (task.state() != BackfillTaskState.RUNNING)
            {
                return BackfillApplyOutcome.INVALID_TRANSITION; // a late checkpoint of an attempt already failed
            }
            final long upTo = Math.max(task.exportedUpTo(), c.exportedUpTo()); // checkpoints only move forward
            next = task.with(upTo, task.attempts(),
                upTo == task.toPosition() ? BackfillTaskState.SUCCEEDED : BackfillTaskState.RUNNING,
                task.failureReason(), c.timestampMs());
        }
        else
        {
            final BackfillEntry.AttemptFailed f = (BackfillEntry.AttemptFailed)entry;
            next = task.with(task.exportedUpTo(), task.attempts(),
                f.giveUp() ? BackfillTaskState.FAILED : BackfillTaskState.PENDING, f.reason(), f.timestampMs());
        }
        tasks.put(key, next);
        return BackfillApplyOutcome.APPLIED;
    }

    private void pruneFinishedLocked()
    {
        final Set<String> finished = new LinkedHashSet<>();
        final Set<String> unfinished = new LinkedHashSet<>();
        for (final BackfillTask task : tasks.values())
        {
            (task.isFinished() ? finished : unfinished).add(task.backfillId());
        }
        finished.removeAll(unfinished);
        int excess = finished.size() - (RETAINED_FINISHED_BACKFILLS - 1);
        for (final String backfillId : finished)
        {
            if (excess-- <= 0)
            {
                break;
            }
            tasks.values().removeIf(t -> t.backfillId().equals(backfillId)); // oldest first: insertion order
        }
    }

    public synchronized BackfillTask task(final BackfillTask.TaskKey key)
    {
        return tasks.get(key);
    }

    /** Every task, in registration order. */
    public synchronized List<BackfillTask> tasks()
    {
        return List.copyOf(tasks.values());
    }

    /** The tasks of one backfill, or every task when {@code backfillId} is empty. */
    public synchronized List<BackfillTask> tasksOf(final String backfillId)
    {
        return backfillId == null || backfillId.isEmpty() ? List.copyOf(tasks.values()) : tasksOfLocked(backfillId);
    }

    private List<BackfillTask> tasksOfLocked(final String backfillId)
    {
        final List<BackfillTask> result = new ArrayList<>();
        for (final BackfillTask task : tasks.values())
        {
            if (task.backfillId().equals(backfillId))
            {
                result.add(task);
            }
        }
        return result;
    }

    public synchronized List<BackfillTask> unfinishedTasks()
    {
        final List<BackfillTask> result = new ArrayList<>();
        for (final BackfillTask task : tasks.values())
        {
            if (!task.isFinished())
            {
                result.add(task);
            }
        }
        return result;
    }

    /**
     * Lowest position any unfinished task still needs, or {@link Long#MAX_VALUE} when none needs any: the log
     * must not be compacted at or past this position.
     */
    public synchronized long compactionFloor()
    {
        long floor = Long.MAX_VALUE;
        for (final BackfillTask task : tasks.values())
        {
            if (!task.isFinished())
            {
                floor = Math.min(floor, task.nextPosition());
            }
        }
        return floor;
    }

    /** Writes every task; {@link #readSnapshot} restores exactly this state. Returns the length written. */
    public synchronized int writeSnapshot(final MutableDirectBuffer buffer, final int offset)
    {
        return BackfillMessages.encodeTasks(tasks.values(), buffer, offset);
    }

    /**
     * Replaces the state with a snapshot's ({@link #writeSnapshot}'s bytes; none at all hold no tasks). Throws
     * {@link BackfillCodecException} and keeps the state on bad bytes.
     */
    public void readSnapshot(final DirectBuffer buffer, final int offset, final int length)
    {
        final List<BackfillTask> restored = BackfillMessages.decodeTasks(buffer, offset, length);
        synchronized (this)
        {
            tasks.clear();
            for (final BackfillTask task : restored)
            {
                tasks.put(task.key(), task);
            }
        }
        changeListener.run();
    }
}
