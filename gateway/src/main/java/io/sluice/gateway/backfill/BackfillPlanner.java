package io.sluice.gateway.backfill;

import io.sluice.gateway.management.ManagementException;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.backfill.BackfillRanges;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import org.springframework.http.HttpStatus;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Checks a reset against the cluster and plans its tasks; changes nothing. Each check fails with the
 * {@link ManagementException} the caller answers (400 task count, 404 exporter, 409 a backfill still running or
 * being started, 503 a partition without a reachable leader or without the exporter's position), naming the values.
 */
final class BackfillPlanner
{
    private final ClusterTopology topology;
    private final int maxTasks;

    BackfillPlanner(final ClusterTopology topology, final int maxTasks)
    {
        this.topology = topology;
        this.maxTasks = maxTasks;
    }

    OptionalInt parseTaskCount(final String raw)
    {
        if (raw == null)
        {
            return OptionalInt.empty();
        }
        final int count;
        try
        {
            count = Integer.parseInt(raw.trim());
        }
        catch (final NumberFormatException e)
        {
            throw new ManagementException(HttpStatus.BAD_REQUEST,
                "backfillTaskCount must be a whole number from 1 to " + maxTasks + ", was '" + raw + "'");
        }
        if (count < 1 || count > maxTasks)
        {
            throw new ManagementException(HttpStatus.BAD_REQUEST, "backfillTaskCount must be from 1 to " + maxTasks +
                " (" + BackfillService.MAX_TASKS_SETTING + "), was " + count);
        }
        return OptionalInt.of(count);
    }

    void checkExporterKnown(final String exporterId)
    {
        final Set<String> known = new TreeSet<>();
        boolean anyStatus = false;
        for (final PartitionReplica replica : topology.distribution().replicas())
        {
            final Optional<PartitionStatus> status = topology.status(replica);
            if (status.isPresent())
            {
                anyStatus = true;
                known.addAll(status.get().exporterPositions().keySet());
            }
        }
        if (!anyStatus)
        {
            throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE,
                "no broker is reachable, so exporter '" + exporterId + "' cannot be checked");
        }
        if (!known.contains(exporterId))
        {
            throw new ManagementException(HttpStatus.NOT_FOUND,
                "unknown exporter '" + exporterId + "' (known: " + String.join(", ", known) + ")");
        }
    }

    static void checkNoneRunning(final String exporterId, final Map<Integer, LeaderFanOut.PartitionAnswer> answers)
    {
        final Map<String, List<Integer>> running = new TreeMap<>();
        for (final LeaderFanOut.PartitionAnswer answer : answers.values())
        {
            for (final BackfillTaskStatus task : answer.tasks())
            {
                if (task.exporterId().equals(exporterId) && !task.isFinished())
                {
                    final List<Integer> partitions = running.computeIfAbsent(task.backfillId(), id -> new ArrayList<>());
                    if (!partitions.contains(task.partitionId()))
                    {
                        partitions.add(task.partitionId());
                    }
                }
            }
        }
        if (!running.isEmpty())
        {
            final Map.Entry<String, List<Integer>> first = running.entrySet().iterator().next();
            throw new ManagementException(HttpStatus.CONFLICT, "exporter '" + exporterId + "' has a backfill still running: " +
                first.getKey() + " on partitions " + first.getValue() + "; cancel it (DELETE /actuator/backfills/" +
                first.getKey() + ") or wait for it to end");
        }
    }

    void checkEveryPartitionLed(final Map<Integer, Integer> leaders, final Map<Integer, LeaderFanOut.PartitionAnswer> answers)
    {
        final List<String> problems = new ArrayList<>();
        for (int partitionId = 1; partitionId <= topology.distribution().partitionCount(); partitionId++)
        {
            final LeaderFanOut.PartitionAnswer answer = answers.get(partitionId);
            if (!leaders.containsKey(partitionId))
            {
                problems.add("partition " + partitionId + " has no reachable leader");
            }
            else if (answer != null && answer.error() != null)
            {
                problems.add(answer.error());
            }
        }
        if (!problems.isEmpty())
        {
            throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE,
                String.join("; ", problems) + "; nothing was changed");
        }
    }

    static ManagementException beingStarted(
        final String exporterId, final ControlBackfills.Claim claim, final long nowMs)
    {
        return new ManagementException(HttpStatus.CONFLICT, "exporter '" + exporterId + "' cannot be reset now: backfill " +
            claim.backfillId() + " holds its claim and is being started (claimed " + Math.max(0, nowMs - claim.claimedAtMs()) +
            " ms ago); a claim whose start never registered anything is released " +
            Math.max(0, claim.releasableAtMs() - nowMs) + " ms from now");
    }

    BackfillPlan plan(
        final String exporterId, final OptionalInt requested, final Map<Integer, Integer> leaders, final boolean dryRun)
    {
        final List<BackfillPlan.Partition> lagging = new ArrayList<>();
        final List<BackfillView.Range> unavailable = new ArrayList<>();
        final List<String> unknownPositions = new ArrayList<>();
        for (final Map.Entry<Integer, Integer> leader : leaders.entrySet())
        {
            final int partitionId = leader.getKey();
            final PartitionStatus status =
                topology.status(new PartitionReplica(leader.getValue(), partitionId)).orElse(null);
            final Long exported = status == null ? null : status.exporterPositions().get(exporterId);
            if (exported == null || exported < 0 || status.lastPosition() < 0)
            {
                unknownPositions.add("partition " + partitionId + " on broker " + leader.getValue() +
                    " reports no position of exporter '" + exporterId + "'");
                continue;
            }
            final long newPosition = Math.max(exported, status.lastPosition());
            // What the log no longer holds is reported, not planned: the held part starts at the first held position.
            final long fromPosition = Math.min(newPosition + 1, Math.max(exported + 1, status.firstPosition()));
            if (fromPosition > exported + 1)
            {
                unavailable.add(new BackfillView.Range(partitionId, exported + 1, fromPosition - 1));
            }
            lagging.add(new BackfillPlan.Partition(partitionId, leader.getValue(), exported, newPosition,
                fromPosition, newPosition, 0, 0));
        }
        if (!unknownPositions.isEmpty())
        {
            throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE,
                String.join("; ", unknownPositions) + "; nothing was changed");
        }
        final List<BackfillPlan.Partition> withRange = lagging.stream().filter(BackfillPlan.Partition::hasRange).toList();
        final int taskCount = requested.orElse(withRange.size());
        // A runner works on one partition's leader, so every lagging partition needs a range of its own. With at
        // least one task per lagging partition, tasks split ranges by position; with fewer, a task takes the
        // ranges of several partitions (task k covers the k-th, (k+N)-th, ... lagging partition).
        final boolean sharedTasks = taskCount < withRange.size();
        final int[] allocation = sharedTasks ? null : BackfillTaskSplit.allocate(
            withRange.stream().mapToLong(p -> p.newPosition() - p.fromPosition() + 1).toArray(), taskCount);

        final List<BackfillPlan.Partition> partitions = new ArrayList<>();
        final List<BackfillView.Range> ranges = new ArrayList<>();
        final List<BackfillPlan.Task> tasks = new ArrayList<>();
        int nextTaskId = 1;
        int withRangeIndex = 0;
        for (final BackfillPlan.Partition partition : lagging)
        {
            if (!partition.hasRange())
            {
                partitions.add(partition);
                continue;
            }
            final int tasksHere = sharedTasks ? 1 : allocation[withRangeIndex];
            final int firstTaskId = sharedTasks ? withRangeIndex % taskCount + 1 : nextTaskId;
            withRangeIndex++;
            partitions.add(new BackfillPlan.Partition(partition.partitionId(), partition.leaderId(),
                partition.oldPosition(), partition.newPosition(), partition.fromPosition(), partition.toPosition(),
                tasksHere, firstTaskId));
            ranges.add(new BackfillView.Range(partition.partitionId(), partition.fromPosition(), partition.toPosition()));
            int taskId = firstTaskId;
            for (final BackfillRanges.Range range :
                BackfillRanges.split(partition.fromPosition() - 1, partition.newPosition(), tasksHere))
            {
                tasks.add(new BackfillPlan.Task(taskId++, partition.partitionId(), range.fromPosition(), range.toPosition()));
            }
            nextTaskId = taskId;
        }
        tasks.sort(Comparator.comparingInt(BackfillPlan.Task::taskId).thenComparingInt(BackfillPlan.Task::partitionId));
        final int distinctTasks = (int)tasks.stream().mapToInt(BackfillPlan.Task::taskId).distinct().count();
        return new BackfillPlan(dryRun, exporterId, distinctTasks, List.copyOf(partitions), List.copyOf(ranges),
            List.copyOf(tasks), List.copyOf(unavailable));
    }
}
