package io.sluice.gateway.backfill;

import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.gateway.broker.BrokerFailure;
import io.sluice.gateway.broker.BrokerTopology;
import io.sluice.gateway.management.ManagementException;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.backfill.BackfillRanges;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.concurrent.Futures;
import io.sluice.protocol.message.AdminLimits;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Service;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;

/**
 * Reset an exporter to the latest positions and backfill the skipped ranges (issue 6): validation, planning,
 * the fan-out of one BackfillRequest per partition leader, and the backfill views put together from every
 * leader's tasks.
 * <p>
 * Everything is validated before anything is sent, in this order: the task count (400), the exporter
 * (404), a backfill of the exporter still running on some partition (409), a reachable leader for every
 * partition (503). The failure answers name the values and nothing is changed.
 * <p>
 * Planning: only partitions whose exporter is behind get a task; the others are at the latest position
 * already. Without a task count each such partition gets one task. With one, every such partition gets one
 * and the rest go to the partitions with the most positions per task, so one lagging partition is split by
 * position among several tasks. Each range runs on its partition's leader, so with fewer tasks than lagging
 * partitions a task takes the ranges of several partitions (the contract accepts any count from 1 to the
 * maximum).
 * <p>
 * Thread-safe.
 */
@Service
public class BackfillService
{
    public static final String MAX_TASKS_SETTING = "sluice.backfill.max-tasks";
    public static final int DEFAULT_MAX_TASKS = 64;
    private static final Logger LOG = LoggerFactory.getLogger(BackfillService.class);
    private static final int REMEMBERED_EMPTY_BACKFILLS = 32;

    private final ClusterTopology topology;
    private final BackfillClient client;
    private final int maxTasks;
    private final Duration requestTimeout;
    private final Clock clock;
    /** Backfills that had nothing to export: no broker holds them, so the gateway remembers them itself. */
    private final Map<String, BackfillView> emptyBackfills = new LinkedHashMap<>();
    private final Set<String> startsInFlight = ConcurrentHashMap.newKeySet();

    @Autowired
    public BackfillService(
        final ClusterTopology topology,
        final BackfillClient client,
        @Value("${" + MAX_TASKS_SETTING + ":" + DEFAULT_MAX_TASKS + "}") final int maxTasks,
        @Value("${sluice.gateway.request-timeout:5s}") final Duration requestTimeout,
        final ObjectProvider<Clock> clock)
    {
        this(topology, client, maxTasks, requestTimeout, clock.getIfAvailable(Clock::systemUTC));
    }

    public BackfillService(
        final ClusterTopology topology,
        final BackfillClient client,
        final int maxTasks,
        final Duration requestTimeout,
        final Clock clock)
    {
        if (maxTasks < 1 || maxTasks > AdminLimits.MAX_BACKFILL_TASKS)
        {
            throw new InvalidClusterConfigException(MAX_TASKS_SETTING, "must be from 1 to " +
                AdminLimits.MAX_BACKFILL_TASKS + " (the brokers refuse more tasks), was " + maxTasks);
        }
        this.topology = topology;
        this.client = client;
        this.maxTasks = maxTasks;
        this.requestTimeout = requestTimeout;
        this.clock = clock;
    }

    public int maxTasks()
    {
        return maxTasks;
    }

    // ------------------------------------------------------------------------------------------ reset

    /** Validates and plans without changing anything: the dry run. */
    public CompletableFuture<BackfillPlan> plan(final String exporterId, final String backfillTaskCount)
    {
        return validateAndPlan(exporterId, backfillTaskCount, true);
    }

    /**
     * Validates, then sends each lagging partition's leader its BackfillRequest, all at once. Completes with
     * the backfill as the leaders registered it; fails with a {@link ManagementException} (nothing changed)
     * when validation fails, or with a {@link BackfillStartException} when some partitions could not register.
     */
    public CompletableFuture<BackfillView> start(final String exporterId, final String backfillTaskCount)
    {
        // One start per exporter at a time on this gateway, so two concurrent requests cannot both pass the
        // 409 check and then split the partitions between them (the leaders refuse the loser, per partition).
        if (!startsInFlight.add(exporterId))
        {
            return CompletableFuture.failedFuture(new ManagementException(HttpStatus.CONFLICT,
                "a reset of exporter '" + exporterId + "' is already in progress"));
        }
        final CompletableFuture<BackfillView> started;
        try
        {
            started = validateAndPlan(exporterId, backfillTaskCount, false).thenCompose(plan -> send(plan));
        }
        catch (final RuntimeException e)
        {
            startsInFlight.remove(exporterId);
            throw e;
        }
        return started.whenComplete((view, failure) -> startsInFlight.remove(exporterId));
    }

    private CompletableFuture<BackfillPlan> validateAndPlan(
        final String exporterId, final String backfillTaskCount, final boolean dryRun)
    {
        final OptionalInt requested;
        final Map<Integer, Integer> leaders;
        try
        {
            requested = parseTaskCount(backfillTaskCount);
            checkExporterKnown(exporterId);
            leaders = leaders();
        }
        catch (final ManagementException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        // 409 before 503: ask every reachable leader for the exporter's unfinished backfills first.
        return statusOfEveryPartition(leaders, "").thenApply(answers ->
        {
            checkNoneRunning(exporterId, answers);
            checkEveryPartitionLed(leaders, answers);
            return plan(exporterId, requested, leaders, dryRun);
        });
    }

    private OptionalInt parseTaskCount(final String raw)
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
                " (" + MAX_TASKS_SETTING + "), was " + count);
        }
        return OptionalInt.of(count);
    }

    private void checkExporterKnown(final String exporterId)
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

    /** The leader of every partition that has a reachable one; the others are missing from the map. */
    private Map<Integer, Integer> leaders()
    {
        final Map<Integer, Integer> leaders = new TreeMap<>();
        for (int partitionId = 1; partitionId <= topology.distribution().partitionCount(); partitionId++)
        {
            final OptionalInt leader = topology.leaderOf(partitionId);
            if (leader.isPresent() && topology.isReachable(leader.getAsInt()) &&
                topology.status(new PartitionReplica(leader.getAsInt(), partitionId))
                    .filter(s -> s.role() == PartitionRole.LEADER).isPresent())
            {
                leaders.put(partitionId, leader.getAsInt());
            }
        }
        return leaders;
    }

    private void checkNoneRunning(final String exporterId, final Map<Integer, PartitionAnswer> answers)
    {
        final Map<String, List<Integer>> running = new TreeMap<>();
        for (final PartitionAnswer answer : answers.values())
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

    private void checkEveryPartitionLed(final Map<Integer, Integer> leaders, final Map<Integer, PartitionAnswer> answers)
    {
        final List<String> problems = new ArrayList<>();
        for (int partitionId = 1; partitionId <= topology.distribution().partitionCount(); partitionId++)
        {
            final PartitionAnswer answer = answers.get(partitionId);
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

    private BackfillPlan plan(
        final String exporterId, final OptionalInt requested, final Map<Integer, Integer> leaders, final boolean dryRun)
    {
        final List<BackfillPlan.Partition> lagging = new ArrayList<>();
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
            lagging.add(new BackfillPlan.Partition(partitionId, leader.getValue(), exported, newPosition,
                exported + 1, newPosition, 0, 0));
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
            withRange.stream().mapToLong(p -> p.newPosition() - p.oldPosition()).toArray(), taskCount);

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
                BackfillRanges.split(partition.oldPosition(), partition.newPosition(), tasksHere))
            {
                tasks.add(new BackfillPlan.Task(taskId++, partition.partitionId(), range.fromPosition(), range.toPosition()));
            }
            nextTaskId = taskId;
        }
        tasks.sort(Comparator.comparingInt(BackfillPlan.Task::taskId).thenComparingInt(BackfillPlan.Task::partitionId));
        final int distinctTasks = (int)tasks.stream().mapToInt(BackfillPlan.Task::taskId).distinct().count();
        return new BackfillPlan(dryRun, exporterId, distinctTasks, List.copyOf(partitions), List.copyOf(ranges),
            List.copyOf(tasks));
    }

    private CompletableFuture<BackfillView> send(final BackfillPlan plan)
    {
        final String backfillId = UUID.randomUUID().toString();
        final List<BackfillPlan.Partition> targets = plan.partitions().stream().filter(p -> p.taskCount() > 0).toList();
        if (targets.isEmpty())
        {
            final BackfillView empty = BackfillViews.of(backfillId, plan.exporterId(), List.of(), List.of(), clock.millis());
            remember(empty);
            LOG.info("backfill {} of exporter {}: every partition is at its latest position, nothing to backfill",
                backfillId, plan.exporterId());
            return CompletableFuture.completedFuture(empty);
        }
        LOG.info("backfill {} of exporter {}: resetting {} partitions, {} tasks", backfillId, plan.exporterId(),
            targets.size(), plan.backfillTaskCount());
        final Map<Integer, CompletableFuture<PartitionAnswer>> pending = new TreeMap<>();
        for (final BackfillPlan.Partition target : targets)
        {
            pending.put(target.partitionId(), startOn(target, backfillId, plan.exporterId()));
        }
        return CompletableFuture.allOf(pending.values().toArray(CompletableFuture[]::new)).thenApply(ignored ->
        {
            final List<BackfillTaskStatus> tasks = new ArrayList<>();
            final List<PartitionAnswer> failed = new ArrayList<>();
            for (final CompletableFuture<PartitionAnswer> future : pending.values())
            {
                final PartitionAnswer answer = future.join();
                if (answer.error() == null)
                {
                    tasks.addAll(answer.tasks());
                }
                else
                {
                    failed.add(answer);
                }
            }
            final BackfillView view = BackfillViews.of(backfillId, plan.exporterId(), tasks,
                failed.stream().map(PartitionAnswer::partitionId).toList(), clock.millis());
            if (!failed.isEmpty())
            {
                LOG.warn("backfill {} of exporter {}: {} of {} partitions not reset: {}", backfillId, plan.exporterId(),
                    failed.size(), targets.size(), failed.stream().map(PartitionAnswer::error).toList());
                throw new BackfillStartException(statusOf(failed, failed.size() == targets.size()), view,
                    failed.stream().map(PartitionAnswer::error).toList());
            }
            LOG.info("backfill {} of exporter {}: registered on every partition", backfillId, plan.exporterId());
            return view;
        });
    }

    /**
     * Registers the partition's part of the backfill on its leader. A leader that moved since the plan answers
     * NOT_LEADER and registers nothing; the start then goes to the leader it names, which registers the range from
     * its own replicated positions, so the partition is not left out of the reset.
     */
    private CompletableFuture<PartitionAnswer> startOn(
        final BackfillPlan.Partition target, final String backfillId, final String exporterId)
    {
        return askLeader(target.partitionId(), target.leaderId(), "registering " + backfillId + " of exporter " +
            exporterId, (leaderId) -> client.start(leaderId, target.partitionId(), backfillId, exporterId,
            target.taskCount(), target.firstTaskId(), requestTimeout));
    }

    private static HttpStatus statusOf(final List<PartitionAnswer> failed, final boolean allFailed)
    {
        if (allFailed && failed.stream().allMatch(a -> a.code() == ErrorCode.CONFLICT))
        {
            return HttpStatus.CONFLICT;
        }
        return failed.stream().allMatch(PartitionAnswer::timedOut) ? HttpStatus.GATEWAY_TIMEOUT :
            HttpStatus.SERVICE_UNAVAILABLE;
    }

    // ------------------------------------------------------------------------------------------ views

    /**
     * Every backfill the leaders hold (and the empty ones this gateway started), newest first; partitions
     * whose leader could not be asked are listed, as their tasks are missing.
     */
    public CompletableFuture<BackfillList> list()
    {
        final Map<Integer, Integer> leaders = leaders();
        return statusOfEveryPartition(leaders, "").thenApply(answers ->
        {
            final List<Integer> unavailable = unavailable(leaders, answers);
            final Map<String, List<BackfillTaskStatus>> byId = new LinkedHashMap<>();
            for (final PartitionAnswer answer : answers.values())
            {
                for (final BackfillTaskStatus task : answer.tasks())
                {
                    byId.computeIfAbsent(task.backfillId(), id -> new ArrayList<>()).add(task);
                }
            }
            final List<BackfillView> views = new ArrayList<>();
            final long nowMs = clock.millis();
            byId.forEach((id, tasks) -> views.add(BackfillViews.of(id, tasks.get(0).exporterId(), tasks, unavailable, nowMs)));
            synchronized (emptyBackfills)
            {
                views.addAll(emptyBackfills.values());
            }
            views.sort((a, b) -> Long.compare(b.createdAtMs(), a.createdAtMs()));
            return new BackfillList(List.copyOf(views), List.copyOf(unavailable));
        });
    }

    public CompletableFuture<BackfillView> get(final String backfillId)
    {
        final Map<Integer, Integer> leaders = leaders();
        return statusOfEveryPartition(leaders, checkId(backfillId))
            .thenApply(answers -> viewOf(backfillId, leaders, answers, "found"));
    }

    /** Cancels the backfill's unfinished tasks on every partition; answers the backfill after the cancel. */
    public CompletableFuture<BackfillView> cancel(final String backfillId)
    {
        checkId(backfillId);
        final Map<Integer, Integer> leaders = leaders();
        final Map<Integer, CompletableFuture<PartitionAnswer>> pending = new TreeMap<>();
        leaders.forEach((partitionId, leaderId) -> pending.put(partitionId,
            askLeader(partitionId, leaderId, "cancelling " + backfillId,
                (broker) -> client.cancel(broker, partitionId, backfillId, requestTimeout))));
        return CompletableFuture.allOf(pending.values().toArray(CompletableFuture[]::new)).thenApply(ignored ->
        {
            final Map<Integer, PartitionAnswer> answers = new TreeMap<>();
            pending.forEach((partitionId, future) -> answers.put(partitionId, future.join()));
            final BackfillView view = viewOf(backfillId, leaders, answers, "cancelled");
            if (!view.unavailablePartitions().isEmpty())
            {
                throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "backfill " + backfillId +
                    " cancelled on the reachable partitions, but not on " + view.unavailablePartitions() + ": " +
                    errors(answers) + "; retry the cancel");
            }
            LOG.info("backfill {}: cancelled ({})", backfillId, view.state());
            return view;
        });
    }

    private BackfillView viewOf(
        final String backfillId, final Map<Integer, Integer> leaders, final Map<Integer, PartitionAnswer> answers,
        final String verb)
    {
        final List<Integer> unavailable = unavailable(leaders, answers);
        final List<BackfillTaskStatus> tasks = new ArrayList<>();
        answers.values().forEach(answer -> tasks.addAll(answer.tasks()));
        if (tasks.isEmpty())
        {
            synchronized (emptyBackfills)
            {
                final BackfillView empty = emptyBackfills.get(backfillId);
                if (empty != null)
                {
                    return empty;
                }
            }
            if (unavailable.isEmpty())
            {
                throw new ManagementException(HttpStatus.NOT_FOUND, "unknown backfill '" + backfillId + "'");
            }
            throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "backfill '" + backfillId + "' not " + verb +
                " on the reachable partitions, and partitions " + unavailable + " could not be asked");
        }
        return BackfillViews.of(backfillId, tasks.get(0).exporterId(), tasks, unavailable, clock.millis());
    }

    // ------------------------------------------------------------------------------------------ fan-out

    /**
     * One partition's answer: its tasks, or what went wrong asking its leader; {@code leaderHint} is the leader a
     * NOT_LEADER answer named, or -1.
     */
    record PartitionAnswer(
        int partitionId, List<BackfillTaskStatus> tasks, String error, ErrorCode code, boolean timedOut, int leaderHint)
    {
    }

    private CompletableFuture<Map<Integer, PartitionAnswer>> statusOfEveryPartition(
        final Map<Integer, Integer> leaders, final String backfillId)
    {
        final Map<Integer, CompletableFuture<PartitionAnswer>> pending = new TreeMap<>();
        leaders.forEach((partitionId, leaderId) -> pending.put(partitionId,
            askLeader(partitionId, leaderId, "asking for backfills",
                (broker) -> client.status(broker, partitionId, backfillId, requestTimeout))));
        return CompletableFuture.allOf(pending.values().toArray(CompletableFuture[]::new)).thenApply(ignored ->
        {
            final Map<Integer, PartitionAnswer> answers = new TreeMap<>();
            pending.forEach((partitionId, future) -> answers.put(partitionId, future.join()));
            return answers;
        });
    }

    /**
     * Asks the partition's leader as the topology last saw it. Leaders move (automatic balance, a restart) between
     * the topology poll and the request; a NOT_LEADER answer naming another broker is asked there once instead of
     * failing the whole call. Never fails: see {@link #answerOf}.
     */
    private CompletableFuture<PartitionAnswer> askLeader(final int partitionId, final int leaderId, final String what,
        final IntFunction<CompletableFuture<List<BackfillTaskStatus>>> request)
    {
        return answerOf(partitionId, leaderId, request.apply(leaderId)).thenCompose(answer ->
        {
            if (answer.code() == ErrorCode.NOT_LEADER && answer.leaderHint() >= 0 && answer.leaderHint() != leaderId)
            {
                LOG.info("{}: partition {} moved from broker {} to broker {}, asking there", what, partitionId, leaderId,
                    answer.leaderHint());
                return answerOf(partitionId, answer.leaderHint(), request.apply(answer.leaderHint()));
            }
            return CompletableFuture.completedFuture(answer);
        });
    }

    /** Never fails: a failure becomes an answer with an error naming the pair. */
    private CompletableFuture<PartitionAnswer> answerOf(
        final int partitionId, final int leaderId, final CompletableFuture<List<BackfillTaskStatus>> request)
    {
        return request.handle((tasks, failure) ->
        {
            if (failure == null)
            {
                return new PartitionAnswer(partitionId, tasks, null, null, false, -1);
            }
            final Throwable cause = Futures.unwrapAll(failure);
            final String pair = "partition " + partitionId + " on broker " + leaderId;
            return switch (BrokerFailure.of(cause))
            {
                case TIMED_OUT -> new PartitionAnswer(partitionId, List.of(),
                    pair + ": no answer within " + requestTimeout.toMillis() + " ms", ErrorCode.TIMEOUT, true, -1);
                case UNREACHABLE -> new PartitionAnswer(partitionId, List.of(), "broker " + leaderId + " unreachable", null,
                    false, -1);
                case UNAVAILABLE, REFUSED ->
                {
                    final BrokerErrorException error = (BrokerErrorException)cause;
                    final String detail = error.code() == ErrorCode.NOT_LEADER ?
                        "not leader" + (error.leaderId() >= 0 ? " (leader is " + error.leaderId() + ")" : "") :
                        error.code() + ": " + error.getMessage();
                    yield new PartitionAnswer(partitionId, List.of(), pair + ": " + detail, error.code(), false,
                        error.code() == ErrorCode.NOT_LEADER ? error.leaderId() : -1);
                }
                default -> new PartitionAnswer(partitionId, List.of(), pair + ": " + cause.getMessage(), null, false, -1);
            };
        });
    }

    private List<Integer> unavailable(final Map<Integer, Integer> leaders, final Map<Integer, PartitionAnswer> answers)
    {
        final List<Integer> unavailable = new ArrayList<>();
        for (int partitionId = 1; partitionId <= topology.distribution().partitionCount(); partitionId++)
        {
            final PartitionAnswer answer = answers.get(partitionId);
            if (!leaders.containsKey(partitionId) || answer == null || answer.error() != null)
            {
                unavailable.add(partitionId);
            }
        }
        return unavailable;
    }

    private static List<String> errors(final Map<Integer, PartitionAnswer> answers)
    {
        return answers.values().stream().map(PartitionAnswer::error).filter(e -> e != null).toList();
    }

    private static String checkId(final String backfillId)
    {
        if (backfillId == null || backfillId.isBlank() || backfillId.length() > 128)
        {
            throw new ManagementException(HttpStatus.BAD_REQUEST, "backfill id must be 1 to 128 characters, was '" +
                backfillId + "'");
        }
        return backfillId;
    }

    private void remember(final BackfillView view)
    {
        synchronized (emptyBackfills)
        {
            emptyBackfills.put(view.backfillId(), view);
            while (emptyBackfills.size() > REMEMBERED_EMPTY_BACKFILLS)
            {
                emptyBackfills.remove(emptyBackfills.keySet().iterator().next());
            }
        }
    }
}
