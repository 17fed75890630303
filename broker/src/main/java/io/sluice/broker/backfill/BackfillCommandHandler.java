package io.sluice.broker.backfill;

import io.sluice.protocol.codecs.BackfillState;
import io.sluice.protocol.codecs.BackfillStatusResponseEncoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.concurrent.Futures;
import io.sluice.protocol.message.AdminLimits;
import io.sluice.protocol.message.CodedFailure;
import io.sluice.protocol.message.ErrorResponseWriter;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.ResponseChannel;
import org.agrona.ExpandableArrayBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * Serves one partition's backfill API on its leader, over requests the command API decoded: a start (propose the
 * registration, answer the tasks the apply created), a status (answer from the registry) and a cancel (propose the
 * cancel, answer the tasks after it), each answered with a BackfillStatusResponse or an ErrorResponse
 * (INVALID_ARGUMENT, EXPORTER_NOT_FOUND, CONFLICT, PARTITION_NOT_FOUND, or what the replication failed with). The
 * command API checks the frame and leadership first.
 * <p>
 * While the partition's exporting is paused, unfinished tasks are reported PENDING.
 * <p>
 * Thread-safe: called on the transport thread; answers are encoded when the transport writes them.
 */
public final class BackfillCommandHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(BackfillCommandHandler.class);
    /** As the gateway's backfill ids. */
    private static final int MAX_BACKFILL_ID_LENGTH = 128;

    private final int brokerId;
    private final int partitionId;
    private final BackfillRegistry registry;
    private final Set<String> exporterIds;
    /** The partition's last applied position: a registration proposed here ends its range at it. */
    private final LongSupplier lastPosition;
    private final BackfillReplicator replicator;
    private final BooleanSupplier exportingPaused;
    private final Clock clock;

    /**
     * @param exporterIds     the exporters configured on the partition; a registration of another is refused.
     * @param replicator      proposes an entry and completes once this replica applied it.
     * @param exportingPaused whether the partition's exporting is paused now (hard pause).
     */
    public BackfillCommandHandler(
        final int brokerId,
        final int partitionId,
        final BackfillRegistry registry,
        final Set<String> exporterIds,
        final LongSupplier lastPosition,
        final BackfillReplicator replicator,
        final BooleanSupplier exportingPaused,
        final Clock clock)
    {
        this.brokerId = brokerId;
        this.partitionId = partitionId;
        this.registry = registry;
        this.exporterIds = Set.copyOf(exporterIds);
        this.lastPosition = lastPosition;
        this.replicator = replicator;
        this.exportingPaused = exportingPaused;
        this.clock = clock;
    }

    /** The tasks of one backfill on this partition, or of all when {@code backfillId} is empty. */
    public void onStatus(final int partition, final String backfillId, final ResponseChannel response)
    {
        if (checkPartition(partition, response))
        {
            response.respond(tasksAnswer(registry.tasksOf(backfillId)));
        }
    }

    /**
     * A start: resets the exporter to the latest position and registers the skipped range's tasks, in one entry;
     * answers the tasks once it is applied. Everything is checked before anything is proposed.
     */
    public void onStart(final int partition, final String backfillId, final String exporterId, final int taskCount,
        final int firstTaskId, final ResponseChannel response)
    {
        if (!checkPartition(partition, response))
        {
            return;
        }
        // The gateway's limits, checked again: a request may come from anyone who reaches the port.
        if (backfillId.isEmpty() || backfillId.length() > MAX_BACKFILL_ID_LENGTH || taskCount < 1 ||
            taskCount > AdminLimits.MAX_BACKFILL_TASKS || firstTaskId < 0)
        {
            response.respond(error(ErrorCode.INVALID_ARGUMENT, "a backfill needs an id of 1.." + MAX_BACKFILL_ID_LENGTH +
                " characters, 1.." + AdminLimits.MAX_BACKFILL_TASKS + " tasks and a first task id of at least 0, was id '" +
                abbreviate(backfillId) + "' with " + taskCount + " tasks from task id " + firstTaskId));
            return;
        }
        if (!exporterIds.contains(exporterId))
        {
            response.respond(error(ErrorCode.EXPORTER_NOT_FOUND,
                "unknown exporter '" + exporterId + "' (configured: " + exporterIds + ")"));
            return;
        }
        final String conflict = unfinishedBackfillOf(exporterId, backfillId);
        if (conflict != null)
        {
            response.respond(error(ErrorCode.CONFLICT, "exporter " + exporterId + " has an unfinished backfill " + conflict));
            return;
        }
        final BackfillEntry.Register entry =
            new BackfillEntry.Register(backfillId, exporterId, taskCount, firstTaskId, clock.millis(), lastPosition.getAsLong());
        propose(entry, response, () ->
        {
            final List<BackfillTask> tasks = registry.tasksOf(backfillId);
            if (tasks.isEmpty())
            {
                // refused at apply: another backfill of the exporter registered in between
                final String raced = unfinishedBackfillOf(exporterId, backfillId);
                return error(ErrorCode.CONFLICT, "exporter " + exporterId + " has an unfinished backfill " + raced);
            }
            LOG.info("partition {} on broker {}: backfill {} of exporter {} registered, {} tasks over ({}, {}]",
                partitionId, brokerId, backfillId, exporterId, tasks.size(), tasks.get(0).fromPosition() - 1,
                tasks.get(tasks.size() - 1).toPosition());
            return tasksAnswer(tasks);
        });
    }

    /** Cancels the unfinished tasks of one backfill on this partition. */
    public void onCancel(final int partition, final String backfillId, final ResponseChannel response)
    {
        if (!checkPartition(partition, response))
        {
            return;
        }
        if (registry.tasksOf(backfillId).stream().allMatch(BackfillTask::isFinished) || backfillId.isEmpty())
        {
            response.respond(tasksAnswer(backfillId.isEmpty() ? List.of() : registry.tasksOf(backfillId)));
            return; // nothing to cancel here (unknown or finished): no entry needed
        }
        propose(new BackfillEntry.Cancel(backfillId, clock.millis()), response,
            () -> tasksAnswer(registry.tasksOf(backfillId)));
    }

    private void propose(
        final BackfillEntry entry, final ResponseChannel response, final java.util.function.Supplier<MessageWriter> answer)
    {
        final CompletableFuture<?> applied;
        try
        {
            applied = replicator.replicate(entry);
        }
        catch (final RuntimeException e)
        {
            response.respond(error(ErrorCode.UNAVAILABLE, "could not propose " + describe(entry) + ": " + e.getMessage()));
            return;
        }
        applied.whenComplete((ignored, failure) ->
        {
            if (failure == null)
            {
                response.respond(answer.get());
            }
            else
            {
                final Throwable cause = Futures.unwrapAll(failure);
                if (cause instanceof CodedFailure coded && coded.code() == ErrorCode.NOT_LEADER)
                {
                    // The leadership moved while the entry waited (a transfer, a stop): the sender asks the new leader.
                    response.respond(ErrorResponseWriter.of(ErrorCode.NOT_LEADER, partitionId,
                        coded.leaderId() < 0 ? ErrorResponseWriter.NO_LEADER : coded.leaderId(),
                        cause.getMessage()));
                    return;
                }
                response.respond(error(ErrorCode.UNAVAILABLE,
                    "could not replicate " + describe(entry) + ": " + cause.getMessage()));
            }
        });
    }

    private String unfinishedBackfillOf(final String exporterId, final String exceptBackfillId)
    {
        for (final BackfillTask task : registry.unfinishedTasks())
        {
            if (task.exporterId().equals(exporterId) && !task.backfillId().equals(exceptBackfillId))
            {
                return task.backfillId();
            }
        }
        return null;
    }

    private boolean checkPartition(final int partition, final ResponseChannel response)
    {
        if (partition != partitionId)
        {
            response.respond(ErrorResponseWriter.of(ErrorCode.PARTITION_NOT_FOUND, partition,
                ErrorResponseWriter.NO_LEADER, "broker " + brokerId + ": request for partition " + partition +
                    " reached the handler of partition " + partitionId));
            return false;
        }
        return true;
    }

    private ErrorResponseWriter error(final ErrorCode code, final String message)
    {
        return ErrorResponseWriter.of(code, partitionId, ErrorResponseWriter.NO_LEADER,
            "partition " + partitionId + " on broker " + brokerId + ": " + message);
    }

    /** A BackfillStatusResponse listing the tasks, encoded now into its own bytes. */
    public MessageWriter tasksAnswer(final List<BackfillTask> tasks)
    {
        final boolean paused = exportingPaused.getAsBoolean();
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64 + tasks.size() * 128);
        final BackfillStatusResponseEncoder encoder = new BackfillStatusResponseEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .partitionId(partitionId);
        final BackfillStatusResponseEncoder.TasksEncoder group = encoder.tasksCount(tasks.size());
        for (final BackfillTask task : tasks)
        {
            group.next()
                .taskId(task.taskId())
                .state(BackfillState.get((short)task.reportedState(paused).code()))
                .fromPosition(task.fromPosition())
                .toPosition(task.toPosition())
                .exportedUpTo(task.exportedUpTo())
                .attempts(task.attempts())
                .createdAtMs(task.createdAtMs())
                .updatedAtMs(task.updatedAtMs())
                .backfillId(task.backfillId())
                .exporterId(task.exporterId())
                .failureReason(task.failureReason());
        }
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
        return MessageWriter.of(buffer, 0, length);
    }

    /** Reads a var-data string after checking its length against the request's bytes. */
    private static String abbreviate(final String value)
    {
        return value.length() <= MAX_BACKFILL_ID_LENGTH ? value : value.substring(0, MAX_BACKFILL_ID_LENGTH) + "...";
    }

    private static String describe(final BackfillEntry entry)
    {
        return entry.getClass().getSimpleName().toLowerCase() + " of " +
            (entry instanceof BackfillEntry.Register r ? "backfill " + r.backfillId() :
                entry instanceof BackfillEntry.Cancel c ? "backfill " + c.backfillId() : "backfill");
    }
}
