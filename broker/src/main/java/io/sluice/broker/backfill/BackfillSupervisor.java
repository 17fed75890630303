package io.sluice.broker.backfill;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Keeps one {@link BackfillTaskRunner} per unfinished task of one partition while this replica leads it, so
 * every task is supervised: started when registered, restarted from its checkpoint after a leader change or
 * restart, stopped when cancelled or when leadership is lost.
 * <p>
 * Installs itself as the registry's change listener. Thread-safe; {@link #reconcile} is cheap (it only
 * submits or stops runners), so it may run on the state machine's apply thread.
 */
public final class BackfillSupervisor implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(BackfillSupervisor.class);

    private final int partitionId;
    private final BackfillRegistry registry;
    private final BackfillRecordSource source;
    private final BackfillExporterFactory exporterFactory;
    private final BackfillReplicator replicator;
    private final ExportingSwitch gate;
    private final BackfillRunnerConfig config;
    private final Clock clock;
    private final ExecutorService executor;
    private final Map<BackfillTask.TaskKey, BackfillTaskRunner> runners = new HashMap<>();
    private boolean leader;
    private boolean closed;

    public BackfillSupervisor(
        final int partitionId,
        final BackfillRegistry registry,
        final BackfillRecordSource source,
        final BackfillExporterFactory exporterFactory,
        final BackfillReplicator replicator,
        final ExportingSwitch gate,
        final BackfillRunnerConfig config,
        final Clock clock)
    {
        this.partitionId = partitionId;
        this.registry = registry;
        this.source = source;
        this.exporterFactory = exporterFactory;
        this.replicator = replicator;
        this.gate = gate;
        this.config = config;
        this.clock = clock;
        final AtomicInteger threadCount = new AtomicInteger();
        this.executor = new ThreadPoolExecutor(config.maxConcurrentTasks(), config.maxConcurrentTasks(),
            30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), runnable ->
            {
                final Thread thread = new Thread(runnable, "backfill-p" + partitionId + "-" + threadCount.incrementAndGet());
                thread.setDaemon(true);
                return thread;
            });
        ((ThreadPoolExecutor)executor).allowCoreThreadTimeOut(true);
        registry.changeListener(this::reconcile);
    }

    /** This replica became the partition's leader: run every unfinished task from its checkpoint. */
    public synchronized void onBecomeLeader()
    {
        leader = true;
        reconcile();
    }

    /** This replica is no longer the leader: stop every runner (their tasks stay as replicated). */
    public synchronized void onLeadershipLost()
    {
        leader = false;
        for (final BackfillTaskRunner runner : runners.values())
        {
            runner.stop();
        }
    }

    public synchronized boolean isLeader()
    {
        return leader;
    }

    /** Starts runners for unfinished tasks without a live one; stops runners whose task finished (e.g. cancelled). */
    public synchronized void reconcile()
    {
        if (closed)
        {
            return;
        }
        for (final BackfillTaskRunner runner : runners.values())
        {
            final BackfillTask task = registry.task(runner.key());
            if (task == null || task.isFinished())
            {
                runner.stop();
            }
        }
        runners.values().removeIf(BackfillTaskRunner::isDone);
        if (!leader)
        {
            return;
        }
        for (final BackfillTask task : registry.unfinishedTasks())
        {
            if (runners.containsKey(task.key()))
            {
                continue; // a live runner (or one still stopping: its end reconciles again)
            }
            final BackfillTaskRunner runner = new BackfillTaskRunner(partitionId, task.key(), registry, source,
                exporterFactory, replicator, gate, config, clock);
            runners.put(task.key(), runner);
            LOG.info("partition {} {}: runner scheduled for ({}..{}] from checkpoint {}, attempt {}", partitionId,
                task.key(), task.fromPosition() - 1, task.toPosition(), task.exportedUpTo(), task.attempts() + 1);
            executor.execute(() ->
            {
                runner.run();
                reconcileAfterRunnerEnded();
            });
        }
    }

    private void reconcileAfterRunnerEnded()
    {
        try
        {
            reconcile();
        }
        catch (final RuntimeException e)
        {
            LOG.error("partition {}: reconciling backfill runners failed", partitionId, e);
        }
    }

    /** Runners alive now (scheduled, running or stopping). */
    public synchronized int liveRunners()
    {
        runners.values().removeIf(BackfillTaskRunner::isDone);
        return runners.size();
    }

    /** Records exported by the live runners, per task. */
    public synchronized Map<BackfillTask.TaskKey, Long> recordsExported()
    {
        final Map<BackfillTask.TaskKey, Long> result = new HashMap<>();
        runners.forEach((key, runner) -> result.put(key, runner.recordsExported()));
        return result;
    }

    /** Stops every runner and waits up to the timeout for them to end. */
    public boolean close(final long timeout, final TimeUnit unit) throws InterruptedException
    {
        synchronized (this)
        {
            closed = true;
            leader = false;
            runners.values().forEach(BackfillTaskRunner::stop);
        }
        executor.shutdown();
        return executor.awaitTermination(timeout, unit);
    }

    @Override
    public void close()
    {
        try
        {
            if (!close(10, TimeUnit.SECONDS))
            {
                LOG.warn("partition {}: backfill runners still running 10 s after close", partitionId);
            }
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
        }
    }
}
