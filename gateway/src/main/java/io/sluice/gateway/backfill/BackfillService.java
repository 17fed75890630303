package io.sluice.gateway.backfill;

import io.sluice.gateway.backfill.LeaderFanOut.PartitionAnswer;
import io.sluice.gateway.management.ManagementException;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimOutcome;
import io.sluice.protocol.codecs.ErrorCode;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Reset an exporter to the latest positions and backfill the skipped ranges (issue 6), and the backfill views put
 * together from every leader's tasks and the control group's empty backfills. This class orders the steps; the checks
 * and the plan are {@link BackfillPlanner}'s, the claim and the empty backfills {@link BackfillClaims}' (the control
 * group), and asking the partitions' leaders, following leaders that move, {@link LeaderFanOut}'s.
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

    private final BackfillClient client;
    private final int maxTasks;
    private final Duration requestTimeout;
    private final Clock clock;
    private final BackfillPlanner planner;
    private final LeaderFanOut fanOut;
    private final BackfillClaims claims;

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
        this.client = client;
        this.maxTasks = maxTasks;
        this.requestTimeout = requestTimeout;
        this.clock = clock;
        this.planner = new BackfillPlanner(topology, maxTasks);
        this.fanOut = new LeaderFanOut(topology, requestTimeout);
        this.claims = new BackfillClaims(topology, client, requestTimeout);
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
        try
        {
            requested = planner.parseTaskCount(backfillTaskCount);
            planner.checkExporterKnown(exporterId);
        }
        catch (final ManagementException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        // The claim is read before the partitions are checked: a STARTED claim seen then had registered every task
        // of its backfill, so the check below saw them all, and the compare-and-set may replace it.
        return fanOut.awaitLeaders().thenCompose(leaders -> claims.read().thenCompose(control ->
            statusOfEveryPartition(leaders, "").thenApply(answers ->
        {
            // 409 before 503: the exporter's unfinished backfills first.
            BackfillPlanner.checkNoneRunning(exporterId, answers);
            final ControlBackfills backfills = control.orElseThrow("exporter '" + exporterId + "' cannot be reset");
            final ControlBackfills.Claim seen = backfills.claimOf(exporterId).orElse(null);
            if (dryRun && seen != null && seen.isBeingStarted(backfills.nowMs()))
            {
                throw BackfillPlanner.beingStarted(exporterId, seen, backfills.nowMs());
            }
            planner.checkEveryPartitionLed(leaders, answers);
            return new Checked(planner.plan(exporterId, requested, leaders, dryRun), seen);
        })));
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
        return claims.claim(ClaimRequest.claim(exporterId, backfillId, checked.seen(), empty)).thenCompose(answer ->
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
            return claims.finish(nothingRegistered ? BackfillClaimAction.RELEASE : BackfillClaimAction.STARTED,
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
     * Registers the partition's part of the backfill on its leader. A leader that moved since the plan answers
     * NOT_LEADER and registers nothing; the start then goes to the leader it names, which registers the range from
     * its own replicated positions, so the partition is not left out of the reset.
     */
    private CompletableFuture<PartitionAnswer> startOn(
        final BackfillPlan.Partition target, final String backfillId, final String exporterId, final long claimIndex)
    {
        return fanOut.askLeader(target.partitionId(), target.leaderId(), "registering " + backfillId + " of exporter " +
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
        final Map<Integer, Integer> leaders = fanOut.leaders();
        final CompletableFuture<BackfillClaims.ControlRead> control = claims.read();
        return statusOfEveryPartition(leaders, "").thenCombine(control, (answers, read) ->
        {
            final List<Integer> unavailable = fanOut.unavailable(leaders, answers);
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
        final Map<Integer, Integer> leaders = fanOut.leaders();
        final String id = checkId(backfillId);
        final CompletableFuture<BackfillClaims.ControlRead> control = claims.read();
        return statusOfEveryPartition(leaders, id)
            .thenCombine(control, (answers, read) -> viewOf(backfillId, leaders, answers, read, "found"));
    }

    /** Cancels the backfill's unfinished tasks on every partition; answers the backfill after the cancel. */
    public CompletableFuture<BackfillView> cancel(final String backfillId)
    {
        checkId(backfillId);
        final CompletableFuture<BackfillClaims.ControlRead> control = claims.read();
        return fanOut.awaitLeaders().thenCompose(leaders -> fanOut.askEvery(leaders, "cancelling " + backfillId,
            (partitionId, broker) -> client.cancel(broker, partitionId, backfillId, requestTimeout)).thenCombine(control,
            (answers, read) ->
        {
            final BackfillView view = viewOf(backfillId, leaders, answers, read, "cancelled");
            if (!view.unavailablePartitions().isEmpty())
            {
                throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "backfill " + backfillId +
                    " cancelled on the reachable partitions, but not on " + view.unavailablePartitions() + ": " +
                    LeaderFanOut.errors(answers) + "; retry the cancel");
            }
            LOG.info("backfill {}: cancelled ({})", backfillId, view.state());
            return view;
        }));
    }

    /**
     * The backfill from the partitions' tasks; with none, the empty backfill the control group recorded (an empty
     * backfill has nothing to cancel), else 404, or 503 when a partition or the control group could not be asked.
     */
    private BackfillView viewOf(
        final String backfillId, final Map<Integer, Integer> leaders, final Map<Integer, PartitionAnswer> answers,
        final BackfillClaims.ControlRead control, final String verb)
    {
        final List<Integer> unavailable = fanOut.unavailable(leaders, answers);
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

    private CompletableFuture<Map<Integer, PartitionAnswer>> statusOfEveryPartition(
        final Map<Integer, Integer> leaders, final String backfillId)
    {
        return fanOut.askEvery(leaders, "asking for backfills",
            (partitionId, broker) -> client.status(broker, partitionId, backfillId, requestTimeout));
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
