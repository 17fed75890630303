package io.sluice.gateway.backfill;

import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.gateway.broker.BrokerFailure;
import io.sluice.gateway.management.ManagementException;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.backfill.BackfillRanges;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimOutcome;
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
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * Reset an exporter to the latest positions and backfill the skipped ranges (issue 6): validation, planning,
 * the exporter's claim in the cluster control group, the fan-out of one BackfillRequest per partition leader, and
 * the backfill views put together from every leader's tasks and the control group's empty backfills.
 * <p>
 * Everything is validated before anything changes, in this order: the task count (400), the exporter (404), a
 * backfill of the exporter still running on some partition (409), a reachable leader for every partition and a
 * readable control group (503). The failure answers name the values and nothing is changed.
 * <p>
 * <b>One reset of an exporter at a time, whichever gateway.</b> Before the partitions are checked the service reads
 * the exporter's claim from the control group's leader; after the checks it takes the claim with a compare-and-set
 * naming the claim it read ({@link ClaimRequest#claim}); only then does it register anything. Of two resets racing,
 * on one gateway or two, the control group lets exactly one take the claim; the other answers 409 naming the backfill
 * that holds it, and nothing of it changed. Once the registrations are answered the claim is marked STARTED (or
 * released when nothing registered), so the next reset may take it once no task of it is unfinished. A claim whose
 * gateway died before that is taken over 60 s after it was taken ({@code BackfillClaimTable} in the broker). A dry
 * run claims nothing, and answers 409 as the reset would while another backfill's claim is being started.
 * <p>
 * Planning: only partitions whose exporter is behind get a task; the others are at the latest position
 * already. Without a task count each such partition gets one task. With one, every such partition gets one
 * and the rest go to the partitions with the most positions per task, so one lagging partition is split by
 * position among several tasks. Each range runs on its partition's leader, so with fewer tasks than lagging
 * partitions a task takes the ranges of several partitions (the contract accepts any count from 1 to the
 * maximum). A backfill with nothing to export takes its claim STARTED at once and is recorded by the control group,
 * which keeps the latest 32, so every gateway lists and finds it.
 * <p>
 * Thread-safe: it holds no backfill state of its own (all of it is the brokers'), so two gateways answer alike.
 */
@Service
public class BackfillService
{
    public static final String MAX_TASKS_SETTING = "sluice.backfill.max-tasks";
    public static final int DEFAULT_MAX_TASKS = 64;
    private static final Logger LOG = LoggerFactory.getLogger(BackfillService.class);
    /** The first wait before asking again a partition whose leader is moving; doubled up to the max. */
    static final Duration NOT_LEADER_BACKOFF = Duration.ofMillis(25);
    static final Duration NOT_LEADER_BACKOFF_MAX = Duration.ofMillis(400);
    /** How often a start or cancel looks at the topology again while a partition shows no leader. */
    private static final Duration LEADER_POLL = Duration.ofMillis(50);

    private final ClusterTopology topology;
    private final BackfillClient client;
    private final int maxTasks;
    private final Duration requestTimeout;
    private final Clock clock;

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

    /** Validates and plans without changing anything (no claim is taken): the dry run. */
    public CompletableFuture<BackfillPlan> plan(final String exporterId, final String backfillTaskCount)
    {
        return validateAndPlan(exporterId, backfillTaskCount, true).thenApply(Checked::plan);
    }

    /**
     * Validates, takes the exporter's claim, then sends each lagging partition's leader its BackfillRequest, all at
     * once. Completes with the backfill as the leaders registered it; fails with a {@link ManagementException}
     * (nothing changed) when validation fails or another reset holds the claim (409), or with a
     * {@link BackfillStartException} when some partitions could not register.
     */
    public CompletableFuture<BackfillView> start(final String exporterId, final String backfillTaskCount)
    {
        return validateAndPlan(exporterId, backfillTaskCount, false).thenCompose(this::claimAndRegister);
    }

    /** A validated plan, and the exporter's claim as read before the partitions were checked (null: none). */
    private record Checked(BackfillPlan plan, ControlBackfills.Claim seen)
    {
    }

    private CompletableFuture<Checked> validateAndPlan(
        final String exporterId, final String backfillTaskCount, final boolean dryRun)
    {
        final OptionalInt requested;
        final Map<Integer, Integer> leaders;
        try
        {
            requested = parseTaskCount(backfillTaskCount);
            checkExporterKnown(exporterId);
            leaders = awaitLeaders();
        }
        catch (final ManagementException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        // The claim is read before the partitions are checked: a STARTED claim seen then had registered every task
        // of its backfill, so the check below saw them all, and the compare-and-set may replace it.
        return readControl().thenCompose(control -> statusOfEveryPartition(leaders, "").thenApply(answers ->
        {
            // 409 before 503: the exporter's unfinished backfills first.
            checkNoneRunning(exporterId, answers);
            final ControlBackfills backfills = control.orElseThrow("exporter '" + exporterId + "' cannot be reset");
            final ControlBackfills.Claim seen = backfills.claimOf(exporterId).orElse(null);
            if (dryRun && seen != null && seen.isBeingStarted(backfills.nowMs()))
            {
                throw beingStarted(exporterId, seen, backfills.nowMs());
            }
            checkEveryPartitionLed(leaders, answers);
            return new Checked(plan(exporterId, requested, leaders, dryRun), seen);
        }));
    }

    private static ManagementException beingStarted(
        final String exporterId, final ControlBackfills.Claim claim, final long nowMs)
    {
        return new ManagementException(HttpStatus.CONFLICT, "exporter '" + exporterId + "' cannot be reset now: backfill " +
            claim.backfillId() + " holds its claim and is being started (claimed " + Math.max(0, nowMs - claim.claimedAtMs()) +
            " ms ago); a claim whose start never registered anything is released " +
            Math.max(0, claim.releasableAtMs() - nowMs) + " ms from now");
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

    /**
     * {@link #leaders()}, waiting at most {@link #requestTimeout} while a partition with a reachable replica shows no
     * leader: a leadership moving (the automatic balance bringing it home, an election) is seen leaderless by the
     * topology for a poll or two, and a start or cancel must not fail for it. A partition whose replicas are all
     * unreachable is not waited for.
     */
    private Map<Integer, Integer> awaitLeaders()
    {
        final long deadlineNanos = System.nanoTime() + requestTimeout.toNanos();
        Map<Integer, Integer> leaders = leaders();
        while (leaderMoving(leaders) && System.nanoTime() - deadlineNanos < 0)
        {
            try
            {
                Thread.sleep(LEADER_POLL.toMillis());
            }
            catch (final InterruptedException e)
            {
                Thread.currentThread().interrupt();
                break;
            }
            leaders = leaders();
        }
        return leaders;
    }

    private boolean leaderMoving(final Map<Integer, Integer> leaders)
    {
        for (int partitionId = 1; partitionId <= topology.distribution().partitionCount(); partitionId++)
        {
            if (!leaders.containsKey(partitionId) &&
                topology.distribution().replicasOf(partitionId).stream().anyMatch(topology::isReachable))
            {
                return true;
            }
        }
        return false;
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

    /**
     * Takes the exporter's claim (compare-and-set from the claim the validation saw), then registers the plan's
     * partitions and marks the claim STARTED (or releases it when nothing registered) before answering.
     */
    private CompletableFuture<BackfillView> claimAndRegister(final Checked checked)
    {
        final BackfillPlan plan = checked.plan();
        final String exporterId = plan.exporterId();
        final String backfillId = UUID.randomUUID().toString();
        final List<BackfillPlan.Partition> targets = plan.partitions().stream().filter(p -> p.taskCount() > 0).toList();
        final boolean empty = targets.isEmpty();
        return claim(ClaimRequest.claim(exporterId, backfillId, checked.seen(), empty)).thenCompose(answer ->
        {
            if (answer.outcome() == BackfillClaimOutcome.CONFLICT)
            {
                LOG.info("backfill {} of exporter {}: claim refused: {}", backfillId, exporterId, answer.reason());
                throw new ManagementException(HttpStatus.CONFLICT, "exporter '" + exporterId + "' cannot be reset now: " +
                    answer.reason() + "; nothing was changed");
            }
            if (answer.outcome() != BackfillClaimOutcome.CLAIMED || !backfillId.equals(answer.heldBackfillId()))
            {
                throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "exporter '" + exporterId +
                    "': the control group answered the claim of backfill " + backfillId + " with " + answer.outcome() +
                    " (" + answer.reason() + "); nothing was registered");
            }
            if (empty)
            {
                LOG.info("backfill {} of exporter {}: every partition is at its latest position, nothing to backfill",
                    backfillId, exporterId);
                return CompletableFuture.completedFuture(
                    BackfillViews.of(backfillId, exporterId, List.of(), List.of(), answer.heldClaimedAtMs())
                        .withUnavailable(plan.unavailable()));
            }
            return register(plan, targets, backfillId, answer.claimIndex());
        });
    }

    /** Sends every target's registration naming the claim, then marks the claim STARTED or releases it. */
    private CompletableFuture<BackfillView> register(
        final BackfillPlan plan, final List<BackfillPlan.Partition> targets, final String backfillId, final long claimIndex)
    {
        final String exporterId = plan.exporterId();
        LOG.info("backfill {} of exporter {}: claimed at control index {}, resetting {} partitions, {} tasks", backfillId,
            exporterId, claimIndex, targets.size(), plan.backfillTaskCount());
        final Map<Integer, CompletableFuture<PartitionAnswer>> pending = new TreeMap<>();
        for (final BackfillPlan.Partition target : targets)
        {
            pending.put(target.partitionId(), startOn(target, backfillId, exporterId, claimIndex));
        }
        final CompletableFuture<BackfillView> registered =
            CompletableFuture.allOf(pending.values().toArray(CompletableFuture[]::new)).thenApply(ignored ->
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
            final BackfillView view = BackfillViews.of(backfillId, exporterId, tasks,
                failed.stream().map(PartitionAnswer::partitionId).toList(), clock.millis())
                .withUnavailable(plan.unavailable());
            if (!failed.isEmpty())
            {
                LOG.warn("backfill {} of exporter {}: {} of {} partitions not reset: {}", backfillId, exporterId,
                    failed.size(), targets.size(), failed.stream().map(PartitionAnswer::error).toList());
                throw new BackfillStartException(statusOf(failed, failed.size() == targets.size()), view,
                    failed.stream().map(PartitionAnswer::error).toList());
            }
            LOG.info("backfill {} of exporter {}: registered on every partition", backfillId, exporterId);
            return view;
        });
        // The claim is STARTED (or released) before the answer, so a reset asked after it is judged by the tasks.
        return registered.handle((view, failure) ->
        {
            final Throwable cause = failure == null ? null : Futures.unwrapAll(failure);
            final boolean nothingRegistered =
                cause instanceof BackfillStartException e && e.registered().tasks().isEmpty();
            return finishClaim(nothingRegistered ? BackfillClaimAction.RELEASE : BackfillClaimAction.STARTED,
                exporterId, backfillId).thenApply(ignored ->
            {
                if (cause instanceof RuntimeException e)
                {
                    throw e;
                }
                if (cause != null)
                {
                    throw new IllegalStateException(cause);
                }
                return view;
            });
        }).thenCompose(f -> f);
    }

    /**
     * Marks the backfill's own claim STARTED or releases it; never fails. When the control group cannot be reached the
     * claim stays STARTING, and another reset takes it over once the takeover bound has passed (and no task of it is
     * unfinished).
     */
    private CompletableFuture<Void> finishClaim(
        final BackfillClaimAction action, final String exporterId, final String backfillId)
    {
        return claim(ClaimRequest.of(action, exporterId, backfillId)).handle((answer, failure) ->
        {
            if (failure != null)
            {
                LOG.warn("backfill {} of exporter {}: {} of its claim failed ({}); the claim is released for a new " +
                    "reset when its takeover bound has passed", backfillId, exporterId, action,
                    Futures.unwrapAll(failure).getMessage());
            }
            else if (answer.outcome() == BackfillClaimOutcome.NOT_HELD)
            {
                LOG.warn("backfill {} of exporter {}: {} of its claim: {}", backfillId, exporterId, action, answer.reason());
            }
            else
            {
                LOG.info("backfill {} of exporter {}: {}", backfillId, exporterId, answer.reason());
            }
            return null;
        });
    }

    /**
     * Sends a claim change to the control group's leader as the topology knows it (any broker would do; the leader
     * saves a hop). A failure becomes a {@link ManagementException}: 503, or 404 for an exporter the brokers do not
     * have. A CLAIM whose answer was lost may still have been taken: it is released, so it does not wait out its bound.
     */
    private CompletableFuture<ClaimAnswer> claim(final ClaimRequest request)
    {
        final OptionalInt target = controlTarget();
        if (target.isEmpty())
        {
            return CompletableFuture.failedFuture(new ManagementException(HttpStatus.SERVICE_UNAVAILABLE,
                "no broker is reachable to take the claim of exporter '" + request.exporterId() + "'; nothing was changed"));
        }
        return client.claim(target.getAsInt(), request, requestTimeout).exceptionallyCompose(failure ->
        {
            final Throwable cause = Futures.unwrapAll(failure);
            if (request.action() == BackfillClaimAction.CLAIM && BrokerFailure.of(cause) == BrokerFailure.TIMED_OUT)
            {
                finishClaim(BackfillClaimAction.RELEASE, request.exporterId(), request.backfillId());
            }
            if (BrokerFailure.errorCode(cause) == ErrorCode.EXPORTER_NOT_FOUND)
            {
                return CompletableFuture.failedFuture(new ManagementException(HttpStatus.NOT_FOUND, cause.getMessage()));
            }
            return CompletableFuture.failedFuture(new ManagementException(HttpStatus.SERVICE_UNAVAILABLE,
                "exporter '" + request.exporterId() + "': the control group did not answer the " + request.action() +
                " of backfill " + request.backfillId() + "'s claim through broker " + target.getAsInt() + ": " +
                describe(cause) + (request.action() == BackfillClaimAction.CLAIM ? "; nothing was registered" : "")));
        });
    }

    /** The control group's leader if the topology knows a reachable one, else the first reachable broker. */
    private OptionalInt controlTarget()
    {
        final OptionalInt leader = topology.controlLeader();
        if (leader.isPresent() && topology.isReachable(leader.getAsInt()))
        {
            return leader;
        }
        for (int brokerId = 0; brokerId < topology.distribution().brokerCount(); brokerId++)
        {
            if (topology.isReachable(brokerId))
            {
                return OptionalInt.of(brokerId);
            }
        }
        return OptionalInt.empty();
    }

    /** The control group's backfills, or why they could not be read; never fails. */
    private record ControlRead(ControlBackfills backfills, String failure)
    {
        ControlBackfills orElseThrow(final String what)
        {
            if (backfills == null)
            {
                throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, what + ": " + failure +
                    "; nothing was changed");
            }
            return backfills;
        }
    }

    /**
     * Reads the claims and empty backfills from the control group's leader; a NOT_LEADER answer naming another
     * broker is asked there once.
     */
    private CompletableFuture<ControlRead> readControl()
    {
        final OptionalInt target = controlTarget();
        if (target.isEmpty())
        {
            return CompletableFuture.completedFuture(new ControlRead(null, "no broker is reachable to read the control group"));
        }
        final int first = target.getAsInt();
        return client.claims(first, requestTimeout)
            .exceptionallyCompose(failure ->
            {
                final int hint = BrokerFailure.leaderHint(failure);
                return hint >= 0 && hint != first && hint < topology.distribution().brokerCount() ?
                    client.claims(hint, requestTimeout) : CompletableFuture.failedFuture(failure);
            })
            .handle((backfills, failure) -> failure == null ? new ControlRead(backfills, null) :
                new ControlRead(null, "the cluster control group could not be read (asked broker " + first + "): " +
                    describe(Futures.unwrapAll(failure))));
    }

    private String describe(final Throwable cause)
    {
        return switch (BrokerFailure.of(cause))
        {
            case TIMED_OUT -> "no answer within " + requestTimeout.toMillis() + " ms";
            case UNREACHABLE -> "unreachable";
            default -> cause.getMessage();
        };
    }

    /**
     * Registers the partition's part of the backfill on its leader. A leader that moved since the plan answers
     * NOT_LEADER and registers nothing; the start then goes to the leader it names, which registers the range from
     * its own replicated positions, so the partition is not left out of the reset.
     */
    private CompletableFuture<PartitionAnswer> startOn(
        final BackfillPlan.Partition target, final String backfillId, final String exporterId, final long claimIndex)
    {
        return askLeader(target.partitionId(), target.leaderId(), "registering " + backfillId + " of exporter " +
            exporterId, (leaderId) -> client.start(leaderId, target.partitionId(), backfillId, exporterId,
            target.taskCount(), target.firstTaskId(), claimIndex, requestTimeout));
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
     * Every backfill the leaders hold and the empty ones the control group recorded, newest first; partitions whose
     * leader could not be asked are listed, as their tasks are missing, and so is a control group that could not be
     * read, as the empty backfills are.
     */
    public CompletableFuture<BackfillList> list()
    {
        final Map<Integer, Integer> leaders = leaders();
        final CompletableFuture<ControlRead> control = readControl();
        return statusOfEveryPartition(leaders, "").thenCombine(control, (answers, read) ->
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
            final List<ControlBackfills.Empty> empties =
                read.backfills() == null ? List.of() : read.backfills().emptyBackfills();
            for (final ControlBackfills.Empty empty : empties)
            {
                if (!byId.containsKey(empty.backfillId()))
                {
                    views.add(emptyView(empty));
                }
            }
            views.sort((a, b) -> Long.compare(b.createdAtMs(), a.createdAtMs()));
            return new BackfillList(List.copyOf(views), List.copyOf(unavailable),
                read.backfills() == null ? read.failure() + "; backfills with nothing to export are not listed" : null);
        });
    }

    public CompletableFuture<BackfillView> get(final String backfillId)
    {
        final Map<Integer, Integer> leaders = leaders();
        final String id = checkId(backfillId);
        final CompletableFuture<ControlRead> control = readControl();
        return statusOfEveryPartition(leaders, id)
            .thenCombine(control, (answers, read) -> viewOf(backfillId, leaders, answers, read, "found"));
    }

    /** Cancels the backfill's unfinished tasks on every partition; answers the backfill after the cancel. */
    public CompletableFuture<BackfillView> cancel(final String backfillId)
    {
        checkId(backfillId);
        final Map<Integer, Integer> leaders = awaitLeaders();
        final CompletableFuture<ControlRead> control = readControl();
        final Map<Integer, CompletableFuture<PartitionAnswer>> pending = new TreeMap<>();
        leaders.forEach((partitionId, leaderId) -> pending.put(partitionId,
            askLeader(partitionId, leaderId, "cancelling " + backfillId,
                (broker) -> client.cancel(broker, partitionId, backfillId, requestTimeout))));
        return CompletableFuture.allOf(pending.values().toArray(CompletableFuture[]::new)).thenCombine(control,
            (ignored, read) ->
        {
            final Map<Integer, PartitionAnswer> answers = new TreeMap<>();
            pending.forEach((partitionId, future) -> answers.put(partitionId, future.join()));
            final BackfillView view = viewOf(backfillId, leaders, answers, read, "cancelled");
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

    /**
     * The backfill from the partitions' tasks; with none, the empty backfill the control group recorded (an empty
     * backfill has nothing to cancel), else 404, or 503 when a partition or the control group could not be asked.
     */
    private BackfillView viewOf(
        final String backfillId, final Map<Integer, Integer> leaders, final Map<Integer, PartitionAnswer> answers,
        final ControlRead control, final String verb)
    {
        final List<Integer> unavailable = unavailable(leaders, answers);
        final List<BackfillTaskStatus> tasks = new ArrayList<>();
        answers.values().forEach(answer -> tasks.addAll(answer.tasks()));
        if (!tasks.isEmpty())
        {
            return BackfillViews.of(backfillId, tasks.get(0).exporterId(), tasks, unavailable, clock.millis());
        }
        if (control.backfills() != null)
        {
            final Optional<ControlBackfills.Empty> empty = control.backfills().emptyBackfill(backfillId);
            if (empty.isPresent())
            {
                return emptyView(empty.get());
            }
        }
        if (unavailable.isEmpty() && control.backfills() != null)
        {
            throw new ManagementException(HttpStatus.NOT_FOUND, "unknown backfill '" + backfillId + "'");
        }
        throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "backfill '" + backfillId + "' not " + verb +
            " on the reachable partitions" + (unavailable.isEmpty() ? "" : ", partitions " + unavailable +
            " could not be asked") + (control.backfills() == null ? ", and " + control.failure() : ""));
    }

    /** An empty backfill as every gateway shows it: SUCCEEDED, no tasks, created when the control group took it. */
    private static BackfillView emptyView(final ControlBackfills.Empty empty)
    {
        return BackfillViews.of(empty.backfillId(), empty.exporterId(), List.of(), List.of(), empty.createdAtMs());
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
     * the topology poll and the request: a NOT_LEADER answer is asked again, at once at the broker it names, else
     * after a short backoff at the leader the topology knows by then, until {@link #requestTimeout} is spent, so a
     * move the cluster makes by itself does not fail the call. Never fails: see {@link #answerOf}.
     */
    private CompletableFuture<PartitionAnswer> askLeader(final int partitionId, final int leaderId, final String what,
        final IntFunction<CompletableFuture<List<BackfillTaskStatus>>> request)
    {
        return askLeader(partitionId, leaderId, what, request, System.nanoTime() + requestTimeout.toNanos(), 0);
    }

    private CompletableFuture<PartitionAnswer> askLeader(final int partitionId, final int leaderId, final String what,
        final IntFunction<CompletableFuture<List<BackfillTaskStatus>>> request, final long deadlineNanos,
        final int attempt)
    {
        return answerOf(partitionId, leaderId, request.apply(leaderId)).thenCompose(answer ->
        {
            if (answer.code() != ErrorCode.NOT_LEADER)
            {
                return CompletableFuture.completedFuture(answer);
            }
            final boolean named = answer.leaderHint() >= 0 && answer.leaderHint() != leaderId;
            final int next = named ? answer.leaderHint() : topology.leaderOf(partitionId).orElse(leaderId);
            final long backoffMs = named && attempt == 0 ? 0 :
                Math.min(NOT_LEADER_BACKOFF.toMillis() << Math.min(attempt, 8), NOT_LEADER_BACKOFF_MAX.toMillis());
            if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMs) - deadlineNanos >= 0)
            {
                return CompletableFuture.completedFuture(answer);
            }
            LOG.info("{}: partition {} is not led by broker {}, asking broker {}{}", what, partitionId, leaderId, next,
                backoffMs == 0 ? "" : " in " + backoffMs + " ms");
            return CompletableFuture.runAsync(() -> { },
                    CompletableFuture.delayedExecutor(backoffMs, TimeUnit.MILLISECONDS))
                .thenCompose(ignored -> askLeader(partitionId, next, what, request, deadlineNanos, attempt + 1));
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
}
