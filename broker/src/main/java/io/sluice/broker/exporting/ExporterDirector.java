package io.sluice.broker.exporting;

import io.sluice.broker.exporter.CommittedRecordBatch;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.ExporterRegistry;
import io.sluice.protocol.cluster.ExporterStatus;
import io.sluice.protocol.codecs.ExportingState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;

/**
 * Runs a partition's exporters while the local replica leads: each from its replicated acknowledged
 * position on, in position order. A failing exporter retries the same record with backoff and never skips
 * it. Acknowledged positions are replicated periodically in one entry for all exporters.
 * <p>
 * Nothing is exported while the partition is paused: each record is exported inside the partition's
 * {@link ExportGate} after checking the {@link ExportingView} there, and a pause is answered only once the gate
 * was passed after the pause was applied. The exporting state is the control group's replica on this broker, and
 * reads as PAUSED until that replica caught up, so a leader that just started or lost its data exports nothing it
 * should not. Acknowledged positions are proposed only while exporting, decided inside the positions gate (a soft
 * pause waits for that one only: exports go on under it).
 * <p>
 * Thread-safety: {@link #start} and {@link #stop} run on the broker's exporter scheduler (Ratis callbacks hop
 * there) or on the thread handing a leadership over, as does the work, one run of this director at a time
 * (guarded by this object's monitor).
 */
public final class ExporterDirector
{
    private static final Logger LOG = LoggerFactory.getLogger(ExporterDirector.class);
    /**
     * Safety-net poll: new records and a resume wake the director at once ({@link #wakeUp()}), so the poll
     * only paces retries (50 ms and up), buffering exporters' flushes (their delays are in seconds) and position
     * acknowledgements (every 100 ms). With 64 idle partitions a 5 ms poll cost 0.17 cores, 25 ms about 0.015
     * ({@code bash qa/bench.sh idle}).
     */
    private static final long IDLE_DELAY_MS = 100;

    private final int brokerId;
    private final int partitionId;
    private final ExportedState state;
    private final ExportingView exporting;
    private final Map<String, ExporterConfig> configs;
    private final ExporterRegistry registry;
    private final Path dataDir;
    private final ScheduledExecutorService scheduler;
    private final BiFunction<Map<String, Long>, Map<String, UnavailableRange>, CompletableFuture<?>> positionsSubmitter;
    private final long ackIntervalMs;
    private final java.util.function.LongSupplier leaderTerm;

    /** Copy-on-write so status reads never wait for a running export. */
    private final List<ExporterContainer> containers = new CopyOnWriteArrayList<>();
    private final CommittedRecordBatch batch;
    private ScheduledFuture<?> task;
    private final AtomicBoolean wakeUpPending = new AtomicBoolean();
    private volatile boolean active;
    private long term = -1;
    private long nextAckSubmitMs;
    private boolean ackInFlight;
    /** The positions proposal not yet answered, for a pause's answer to wait for (see {@link ExportingView#awaitObeyed}). */
    private volatile CompletableFuture<?> positionsInFlight = CompletableFuture.completedFuture(null);

    public ExporterDirector(
        final int brokerId,
        final int partitionId,
        final ExportedState state,
        final ExportingView exporting,
        final Map<String, ExporterConfig> configs,
        final ExporterRegistry registry,
        final Path dataDir,
        final ScheduledExecutorService scheduler,
        final BiFunction<Map<String, Long>, Map<String, UnavailableRange>, CompletableFuture<?>> positionsSubmitter,
        final long ackIntervalMs,
        final java.util.function.LongSupplier leaderTerm)
    {
        this.leaderTerm = leaderTerm;
        this.brokerId = brokerId;
        this.partitionId = partitionId;
        this.state = state;
        this.exporting = exporting;
        exporting.positionsInFlight(() -> positionsInFlight);
        this.configs = Map.copyOf(configs);
        this.registry = registry;
        this.dataDir = dataDir;
        this.scheduler = scheduler;
        this.positionsSubmitter = positionsSubmitter;
        this.ackIntervalMs = ackIntervalMs;
        this.batch = new CommittedRecordBatch(partitionId);
    }

    /** Starts exporting for a leadership term; a no-op if already running for it. */
    public synchronized void start(final long leaderTerm)
    {
        if (active && term == leaderTerm)
        {
            return;
        }
        stopLocked();
        term = leaderTerm;
        for (final ExporterConfig config : configs.values())
        {
            containers.add(new ExporterContainer(this, config));
        }
        active = true;
        LOG.info("partition {} on broker {}: exporters {} start in term {} (state {})",
            partitionId, brokerId, configs.keySet(), leaderTerm, exporting.state());
        task = scheduler.scheduleWithFixedDelay(this::doWork, 0, IDLE_DELAY_MS, TimeUnit.MILLISECONDS);
    }

    public synchronized void stop()
    {
        if (active)
        {
            LOG.info("partition {} on broker {}: exporters stop (term {})", partitionId, brokerId, term);
        }
        stopLocked();
    }

    /**
     * Stops the exporters soon, on the director's scheduler, unless this replica leads the director's term: for
     * Ratis callbacks, which must not wait for an export in flight (that ends at its next record by itself).
     */
    public void stopUnlessLeading()
    {
        try
        {
            scheduler.execute(this::stopIfNotLeading);
        }
        catch (final RejectedExecutionException e)
        {
            // shutting down: the broker is closing its exporters anyway
        }
    }

    private synchronized void stopIfNotLeading()
    {
        if (active && leaderTerm.getAsLong() != term)
        {
            LOG.info("partition {} on broker {}: exporters stop (term {} ended)", partitionId, brokerId, term);
            stopLocked();
        }
    }

    /**
     * Runs the exporters soon on the director's scheduler instead of waiting for the next poll: called on a
     * Ratis thread when records or a new exporting state were applied, so it only queues (at most one) task.
     */
    public void wakeUp()
    {
        if (active && wakeUpPending.compareAndSet(false, true))
        {
            try
            {
                scheduler.execute(this::doWork);
            }
            catch (final RejectedExecutionException e)
            {
                wakeUpPending.set(false); // shutting down: the broker is closing its exporters anyway
            }
        }
    }

    public boolean isActive()
    {
        return active;
    }

    /** Whether this replica still leads the term the exporters run for (an export in flight ends when not). */
    boolean leadsItsTerm()
    {
        return leaderTerm.getAsLong() == term;
    }

    int partitionId()
    {
        return partitionId;
    }

    int brokerId()
    {
        return brokerId;
    }

    ExportedState state()
    {
        return state;
    }

    ExportingView exporting()
    {
        return exporting;
    }

    ExporterRegistry registry()
    {
        return registry;
    }

    Path dataDir()
    {
        return dataDir;
    }

    /** The records a container is exporting now: one batch for the director, whose containers run one at a time. */
    CommittedRecordBatch batch()
    {
        return batch;
    }

    /** What each exporter of this term has done so far; empty when the director is not running. Any thread. */
    public List<ExporterStatus> exporterStatuses()
    {
        final List<ExporterStatus> statuses = new ArrayList<>();
        for (final ExporterContainer container : containers)
        {
            final UnavailableRange range = container.unavailableRange();
            statuses.add(new ExporterStatus(container.config.id(), container.config.type(),
                container.acknowledgedPosition(), container.retrying, container.lastError, container.totalFailures,
                container.deadLetters.get(), container.sinkWrites.get(), container.sinkWriteNanos.get(),
                range == null ? 0 : range.fromPosition(), range == null ? 0 : range.toPosition(),
                container.sentPosition()));
        }
        return statuses;
    }

    /**
     * Lowest position sent to the sink over this term's exporters (see {@link ExporterContainer#sentPosition}), -1
     * when the director is not running (a follower's: only the leader sends). Any thread.
     */
    public long sentPosition()
    {
        long min = Long.MAX_VALUE;
        for (final ExporterContainer container : containers)
        {
            min = Math.min(min, container.sentPosition());
        }
        return !active || min == Long.MAX_VALUE ? -1 : min;
    }

    private void stopLocked()
    {
        active = false;
        if (task != null)
        {
            task.cancel(false);
            task = null;
        }
        for (final ExporterContainer container : containers)
        {
            container.close();
        }
        containers.clear();
        ackInFlight = false;
    }

    private synchronized void doWork()
    {
        wakeUpPending.set(false);
        if (!active)
        {
            return;
        }
        if (leaderTerm.getAsLong() != term)
        {
            // Missed a step-down notification: never export on a replica that no longer leads this term.
            LOG.info("partition {} on broker {}: no longer leader of term {}, exporters stop", partitionId, brokerId, term);
            stopLocked();
            return;
        }
        try
        {
            final long nowMs = System.currentTimeMillis();
            if (exporting.state() != ExportingState.PAUSED)
            {
                for (final ExporterContainer container : containers)
                {
                    container.work(nowMs);
                }
            }
            submitPositions(nowMs);
        }
        catch (final Throwable t)
        {
            LOG.error("partition {} on broker {}: exporter director failed", partitionId, brokerId, t);
        }
    }

    private void submitPositions(final long nowMs)
    {
        if (ackInFlight || nowMs < nextAckSubmitMs)
        {
            return;
        }
        Map<String, Long> advanced = null;
        final Map<String, UnavailableRange> skipped = new HashMap<>();
        for (final ExporterContainer container : containers)
        {
            final long acked = container.acknowledged.get();
            final String id = container.config.id();
            // A start from latest and a move past a compacted range are replicated even without a new record.
            final boolean unrecorded = container.mustRecordStart && !state.hasExporterPosition(id);
            if (acked > state.exporterPosition(id) || unrecorded || container.pendingSkip != null)
            {
                if (advanced == null)
                {
                    advanced = new HashMap<>();
                }
                advanced.put(id, acked);
                if (container.pendingSkip != null)
                {
                    skipped.put(id, container.pendingSkip);
                }
            }
        }
        if (advanced == null)
        {
            return;
        }
        final CompletableFuture<?> submitted;
        final ExportGate gate = exporting.positionsGate();
        gate.enter();
        try
        {
            // Decided inside the positions gate, and published before leaving it: a pause's answer passes that gate
            // and then waits for what is published (ExportingView.awaitObeyed), so no position lands after it.
            if (exporting.state() != ExportingState.EXPORTING)
            {
                return;
            }
            submitted = positionsSubmitter.apply(advanced, skipped);
            positionsInFlight = submitted;
        }
        finally
        {
            gate.exit();
        }
        ackInFlight = true;
        nextAckSubmitMs = nowMs + ackIntervalMs;
        final long submittedInTerm = term;
        // On the director's scheduler: the future may complete on a Ratis thread inside Ratis' own locks (a step-down
        // fails pending requests), which must not wait here for a director run that holds this monitor.
        submitted.whenCompleteAsync((r, e) ->
        {
            synchronized (ExporterDirector.this)
            {
                if (term == submittedInTerm)
                {
                    ackInFlight = false;
                    if (e == null)
                    {
                        for (final ExporterContainer container : containers)
                        {
                            if (container.pendingSkip != null && container.pendingSkip.equals(skipped.get(container.config.id())))
                            {
                                container.pendingSkip = null; // replicated: every replica and the view have it
                            }
                        }
                    }
                }
            }
            if (e != null)
            {
                LOG.debug("partition {} on broker {}: replicating exporter positions failed: {}",
                    partitionId, brokerId, e.toString());
            }
        }, this::onScheduler);
    }

    /** Runs {@code task} on the scheduler; dropped once it is shut down (the broker stops, so does this director). */
    private void onScheduler(final Runnable task)
    {
        try
        {
            scheduler.execute(task);
        }
        catch (final RejectedExecutionException stopping)
        {
            // the completing thread (maybe Ratis') must not get the rejection
        }
    }
}
