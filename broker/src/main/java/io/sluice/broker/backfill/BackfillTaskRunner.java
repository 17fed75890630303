package io.sluice.broker.backfill;

import io.sluice.exporter.spi.CommittedRecord;
import io.sluice.protocol.concurrent.Futures;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs one backfill task on its partition's leader: with its own exporter instance it exports the committed
 * records of the task's range, from the replicated checkpoint on, and replicates checkpoints every
 * {@code checkpointEveryRecords} records or {@code checkpointIntervalMs} (after flushing the exporter, so a
 * checkpoint never claims what the sink may lose). A failed attempt is recorded with its reason and retried
 * after an exponential backoff from the last checkpoint; after {@code maxAttempts} attempts (counted over
 * every leader) the task ends FAILED with the last reason. Reaching the end replicates the final checkpoint,
 * which completes the task.
 * <p>
 * {@link #stop} (pause is separate: see {@link ManualExportingSwitch}) ends the run promptly at the next batch boundary,
 * leaving the task's replicated state for whoever runs it next (after a leader change or restart). Runs on
 * one thread; {@link #stop} and the getters may be called from any thread.
 */
public final class BackfillTaskRunner implements Runnable
{
    private static final Logger LOG = LoggerFactory.getLogger(BackfillTaskRunner.class);
    private static final long WAIT_SLICE_MS = 50;
    /** Bounds the wait for a buffering exporter's last bulk, far above any sensible maximum bulk delay. */
    private static final long FINAL_FLUSH_TIMEOUT_MS = 60_000;

    private final int partitionId;
    private final BackfillTask.TaskKey key;
    private final BackfillRegistry registry;
    private final BackfillRecordSource source;
    private final BackfillExporterFactory exporterFactory;
    private final BackfillReplicator replicator;
    private final ExportingSwitch gate;
    private final BackfillRunnerConfig config;
    private final Clock clock;
    private final AtomicLong recordsExported = new AtomicLong();
    private final Object stopSignal = new Object();
    private volatile boolean stopped;
    private volatile boolean done;

    // State of the running attempt; touched only by the running thread.
    private BackfillExporter exporter;
    private CompletableFuture<?> pendingCheckpoint = CompletableFuture.completedFuture(null);
    private long exportedPosition;
    private long expectedPosition;
    /** The range of this attempt moved past because it was compacted away; -1 when none. */
    private long skippedFrom = -1;
    private long skippedTo = -1;

    public BackfillTaskRunner(
        final int partitionId,
        final BackfillTask.TaskKey key,
        final BackfillRegistry registry,
        final BackfillRecordSource source,
        final BackfillExporterFactory exporterFactory,
        final BackfillReplicator replicator,
        final ExportingSwitch gate,
        final BackfillRunnerConfig config,
        final Clock clock)
    {
        this.partitionId = partitionId;
        this.key = key;
        this.registry = registry;
        this.source = source;
        this.exporterFactory = exporterFactory;
        this.replicator = replicator;
        this.gate = gate;
        this.config = config;
        this.clock = clock;
    }

    public BackfillTask.TaskKey key()
    {
        return key;
    }

    /** Records exported by this runner (all attempts; re-exports after a failure count again). */
    public long recordsExported()
    {
        return recordsExported.get();
    }

    /** True once {@link #run} has returned. */
    public boolean isDone()
    {
        return done;
    }

    /** Asks the run to end at the next batch boundary; never blocks. */
    public void stop()
    {
        stopped = true;
        synchronized (stopSignal)
        {
            stopSignal.notifyAll();
        }
    }

    public boolean isStopped()
    {
        return stopped;
    }

    @Override
    public void run()
    {
        try
        {
            runAttempts();
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
        }
        catch (final RuntimeException | Error e)
        {
            LOG.error("partition {} {}: runner ended unexpectedly", partitionId, key, e);
        }
        finally
        {
            done = true;
        }
    }

    private void runAttempts() throws InterruptedException
    {
        while (!stopped)
        {
            final BackfillTask task = registry.task(key);
            if (task == null || task.isFinished())
            {
                return;
            }
            if (task.attempts() >= config.maxAttempts())
            {
                // attempts are replicated, so a new leader does not start over: give up with the last reason
                replicateQuietly(new BackfillEntry.AttemptFailed(key.backfillId(), key.taskId(),
                    "gave up after " + task.attempts() + " attempts: " + task.failureReason(), true, clock.millis()));
                return;
            }
            if (!gate.tryEnter())
            {
                sleepUnlessStopped(WAIT_SLICE_MS); // paused: start no attempt, export nothing
                continue;
            }
            gate.exit();
            try
            {
                await(replicator.replicate(new BackfillEntry.AttemptStarted(key.backfillId(), key.taskId(), clock.millis())));
                runAttempt();
                if (!stopped)
                {
                    LOG.info("partition {} {}: succeeded", partitionId, key);
                }
                return;
            }
            catch (final InterruptedException e)
            {
                throw e;
            }
            catch (final Exception e)
            {
                if (stopped)
                {
                    return;
                }
                awaitQuietly(pendingCheckpoint); // record the failure after the last checkpoint, not before it
                final BackfillTask now = registry.task(key);
                if (now == null || now.isFinished())
                {
                    return;
                }
                final int attempts = now.attempts();
                final boolean giveUp = attempts >= config.maxAttempts();
                final String reason = describe(e);
                LOG.warn("partition {} {}: attempt {} of {} failed at position {}: {}", partitionId, key, attempts,
                    config.maxAttempts(), exportedPosition + 1, reason);
                replicateQuietly(new BackfillEntry.AttemptFailed(
                    key.backfillId(), key.taskId(), reason, giveUp, clock.millis()));
                if (giveUp)
                {
                    return;
                }
                sleepUnlessStopped(config.backoffMs(attempts));
            }
        }
    }

    /** One attempt from the replicated checkpoint to the end of the range; returns normally when complete or stopped. */
    private void runAttempt() throws Exception
    {
        final BackfillTask task = registry.task(key);
        if (task == null || task.isFinished())
        {
            return;
        }
        final long toPosition = task.toPosition();
        exportedPosition = task.exportedUpTo();
        skippedFrom = -1;
        skippedTo = -1;
        long checkpointedPosition = exportedPosition;
        long lastCheckpointAtMs = clock.millis();
        pendingCheckpoint = CompletableFuture.completedFuture(null);

        try (BackfillExporter exporter = exporterFactory.open(task.exporterId(), partitionId, task))
        {
            final BackfillRecordConsumer tracking = this::onRecordRead;
            this.exporter = exporter;
            while (!stopped && exportedPosition < toPosition)
            {
                if (!gate.tryEnter())
                {
                    sleepUnlessStopped(WAIT_SLICE_MS); // paused: the next batch waits
                    continue;
                }
                final long firstHeld = source.firstHeldPosition();
                if (exportedPosition + 1 < firstHeld)
                {
                    // Compacted away since the plan (which reported what was gone then): never fail for it.
                    final long to = Math.min(toPosition, firstHeld - 1);
                    LOG.warn("backfill {} task {} of partition {}: positions {}..{} were compacted away and can never " +
                        "be exported; it goes on from {}", key.backfillId(), key.taskId(), partitionId,
                        exportedPosition + 1, to, to + 1);
                    skippedFrom = skippedFrom < 0 ? exportedPosition + 1 : skippedFrom;
                    skippedTo = to;
                    exportedPosition = to;
                    gate.exit();
                    continue;
                }
                final int read;
                try
                {
                    // Lock order: gate, then the record log's monitor; nothing takes them the other way round.
                    expectedPosition = exportedPosition + 1;
                    read = source.read(exportedPosition + 1, toPosition, config.batchRecords(), tracking);
                }
                finally
                {
                    gate.exit();
                }
                if (read == 0)
                {
                    throw new IllegalStateException("no committed record at position " + (exportedPosition + 1) +
                        " of partition " + partitionId + " (range ends at " + toPosition + ")");
                }

                final long nowMs = clock.millis();
                final boolean due = exportedPosition - checkpointedPosition >= config.checkpointEveryRecords() ||
                    nowMs - lastCheckpointAtMs >= config.checkpointIntervalMs();
                if (due && exportedPosition < toPosition && pendingCheckpoint.isDone() && !gate.withholdsCheckpoints())
                {
                    await(pendingCheckpoint); // surface a failed earlier checkpoint
                    final long acknowledged = Math.min(exportedPosition, flushUnlessPaused(exporter));
                    lastCheckpointAtMs = nowMs;
                    if (acknowledged > checkpointedPosition)
                    {
                        final CompletableFuture<?> published = gate.publishCheckpoint(() -> replicator.replicate(
                            new BackfillEntry.Checkpoint(key.backfillId(), key.taskId(), acknowledged, nowMs)));
                        if (published != null) // else a soft pause came in between: the next one goes on from here
                        {
                            checkpointedPosition = acknowledged;
                            pendingCheckpoint = published;
                        }
                    }
                }
            }
            if (stopped)
            {
                awaitQuietly(pendingCheckpoint); // settle before reporting done (fails fast on a lost leadership)
                return;
            }
            // A buffering exporter sends its last bulk once it is due (at most its maximum delay): flush until then.
            final long flushDeadlineMs = clock.millis() + FINAL_FLUSH_TIMEOUT_MS;
            long acknowledged = flushUnlessPaused(exporter);
            while (acknowledged < toPosition && !stopped)
            {
                if (clock.millis() > flushDeadlineMs)
                {
                    throw new IllegalStateException("exporter " + task.exporterId() + " acknowledged only up to " +
                        acknowledged + " of " + toPosition + " within " + FINAL_FLUSH_TIMEOUT_MS + " ms of flushing");
                }
                sleepUnlessStopped(WAIT_SLICE_MS);
                acknowledged = flushUnlessPaused(exporter);
            }
            if (stopped)
            {
                awaitQuietly(pendingCheckpoint);
                return;
            }
            await(pendingCheckpoint);
            CompletableFuture<?> last;
            while ((last = gate.publishCheckpoint(() -> replicator.replicate(
                new BackfillEntry.Checkpoint(key.backfillId(), key.taskId(), toPosition, clock.millis())))) == null)
            {
                sleepUnlessStopped(WAIT_SLICE_MS); // the final checkpoint is withheld while (soft) paused
                if (stopped)
                {
                    return;
                }
            }
            await(last);
        }
        finally
        {
            this.exporter = null;
        }
    }

    /** Flushes under the export gate, as every send to a sink happens; paused, it only reads the acknowledged position. */
    private long flushUnlessPaused(final BackfillExporter exporter) throws Exception
    {
        if (!gate.tryEnter())
        {
            return passedSkipped(exporter.acknowledged());
        }
        try
        {
            return passedSkipped(exporter.flush());
        }
        finally
        {
            gate.exit();
        }
    }

    /** The exporter's acknowledged position, past a compacted range once everything before the range is acknowledged. */
    private long passedSkipped(final long acknowledged)
    {
        return skippedFrom > 0 && acknowledged >= skippedFrom - 1 ? Math.max(acknowledged, skippedTo) : acknowledged;
    }

    private void onRecordRead(final CommittedRecord record) throws Exception
    {
        final long position = record.position();
        if (position != expectedPosition)
        {
            throw new IllegalStateException("record log returned position " + position + " where " +
                expectedPosition + " was expected (partition " + partitionId + ")");
        }
        exporter.onRecord(record);
        exportedPosition = position;
        expectedPosition = position + 1;
        recordsExported.incrementAndGet();
    }

    private void await(final CompletableFuture<?> future) throws Exception
    {
        try
        {
            future.get(config.replicateTimeoutMs(), TimeUnit.MILLISECONDS);
        }
        catch (final java.util.concurrent.ExecutionException e)
        {
            throw Futures.unwrapAll(e) instanceof Exception cause ? cause : e;
        }
        catch (final TimeoutException e)
        {
            throw new TimeoutException("replicating a backfill entry took over " + config.replicateTimeoutMs() + " ms");
        }
    }

    private void awaitQuietly(final CompletableFuture<?> future)
    {
        try
        {
            await(future);
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
        }
        catch (final Exception e)
        {
            // a lost checkpoint only means more re-export from the previous one
        }
    }

    private void replicateQuietly(final BackfillEntry entry)
    {
        try
        {
            await(replicator.replicate(entry));
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
        }
        catch (final Exception e)
        {
            // the next leader (or the next run here) sees the task unfinished and decides again
            LOG.warn("partition {} {}: could not replicate {}: {}", partitionId, key,
                entry.getClass().getSimpleName(), describe(e));
        }
    }

    private void sleepUnlessStopped(final long ms) throws InterruptedException
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        synchronized (stopSignal)
        {
            while (!stopped)
            {
                final long leftNs = deadlineNs - System.nanoTime();
                if (leftNs <= 0)
                {
                    return;
                }
                TimeUnit.NANOSECONDS.timedWait(stopSignal, leftNs);
            }
        }
    }

    private static String describe(final Throwable e)
    {
        final String message = e.getMessage();
        return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
}
