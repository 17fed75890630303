package io.sluice.broker.partition;

import io.sluice.broker.exporter.CommittedRecordBatch;
import io.sluice.broker.exporter.CommittedRecordView;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.ExporterRegistry;
import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterController;
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
import java.util.concurrent.atomic.AtomicLong;
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
 * should not. Acknowledged positions are proposed only while exporting, decided inside the gate.
 * <p>
 * Thread-safety: {@link #start} and {@link #stop} run on the broker's exporter scheduler (Ratis callbacks hop
 * there) or on the thread handing a leadership over, as does the work, one run of this director at a time
 * (guarded by this object's monitor).
 */
public final class ExporterDirector
{
    private static final Logger LOG = LoggerFactory.getLogger(ExporterDirector.class);
    private static final int BATCH_RECORDS = 512;
    /**
     * Safety-net poll: new records and a resume wake the director at once ({@link #wakeUp()}), so the poll
     * only paces retries (50 ms and up), buffering exporters' flushes (their delays are in seconds) and position
     * acknowledgements (every 100 ms). With 64 idle partitions a 5 ms poll cost 0.17 cores, 25 ms about 0.015
     * ({@code bash qa/bench.sh idle}).
     */
    private static final long IDLE_DELAY_MS = 100;
    private static final long MIN_BACKOFF_MS = 50;

    private final int brokerId;
    private final int partitionId;
    private final PartitionState state;
    private final ExportingView exporting;
    private final Map<String, ExporterConfig> configs;
    private final ExporterRegistry registry;
    private final Path dataDir;
    private final ScheduledExecutorService scheduler;
    private final BiFunction<Map<String, Long>, Map<String, UnavailableRange>, CompletableFuture<?>> positionsSubmitter;
    private final long ackIntervalMs;
    private final java.util.function.LongSupplier leaderTerm;

    /** Copy-on-write so status reads never wait for a running export. */
    private final List<Container> containers = new CopyOnWriteArrayList<>();
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
        final PartitionState state,
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
            containers.add(new Container(config));
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

    /** What each exporter of this term has done so far; empty when the director is not running. Any thread. */
    public List<ExporterStatus> exporterStatuses()
    {
        final List<ExporterStatus> statuses = new ArrayList<>();
        for (final Container container : containers)
        {
            final UnavailableRange range = container.unavailableRange();
            statuses.add(new ExporterStatus(container.config.id(), container.config.type(),
                container.acknowledged.get(), container.retrying, container.lastError, container.totalFailures,
                container.deadLetters.get(), container.sinkWrites.get(), container.sinkWriteNanos.get(),
                range == null ? 0 : range.fromPosition(), range == null ? 0 : range.toPosition()));
        }
        return statuses;
    }

    private void stopLocked()
    {
        active = false;
        if (task != null)
        {
            task.cancel(false);
            task = null;
        }
        for (final Container container : containers)
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
                for (final Container container : containers)
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
        for (final Container container : containers)
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
        final ExportGate gate = exporting.gate();
        gate.enter();
        try
        {
            // Decided inside the gate, and published before leaving it: a soft pause's answer passes the gate and
            // then waits for what is published (ExportingView.awaitObeyed), so no position lands after it.
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
        submitted.whenComplete((r, e) ->
        {
            synchronized (ExporterDirector.this)
            {
                if (term == submittedInTerm)
                {
                    ackInFlight = false;
                    if (e == null)
                    {
                        for (final Container container : containers)
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
        });
    }

    /** One exporter instance of this leadership term. */
    private final class Container implements ExporterController
    {
        private final ExporterConfig config;
        private final AtomicLong acknowledged = new AtomicLong();
        private final AtomicLong deadLetters = new AtomicLong();
        private final AtomicLong sinkWrites = new AtomicLong();
        private final AtomicLong sinkWriteNanos = new AtomicLong();
        private final long maxBackoffMs;
        private Exporter exporter;
        private boolean opened;
        private long nextPosition;
        private long retryAtMs;
        private long backoffMs;
        private int failures;
        private boolean flushPending;
        private volatile long totalFailures;
        /** Read by status requests on other threads. */
        private volatile boolean retrying;
        private volatile String lastError;
        /** The compacted range this term moved past, until its positions entry committed; the director's thread. */
        private volatile UnavailableRange pendingSkip;
        /** Started from latest with no replicated position: the start is replicated even before any record. */
        private final boolean mustRecordStart;

        Container(final ExporterConfig config)
        {
            this.config = config;
            this.maxBackoffMs = ExporterRegistry.maxBackoffMs(config);
            this.backoffMs = Math.min(MIN_BACKOFF_MS, maxBackoffMs);
            long start = state.exporterPosition(config.id());
            final boolean fresh = !state.hasExporterPosition(config.id());
            if (fresh && config.startFrom() == ExporterConfig.StartFrom.LATEST)
            {
                start = state.lastPosition();
                LOG.info("partition {} on broker {}: exporter {} is new here and starts from latest: after position {}",
                    partitionId, brokerId, config.id(), start);
            }
            this.mustRecordStart = fresh && config.startFrom() == ExporterConfig.StartFrom.LATEST;
            this.acknowledged.set(start);
            this.nextPosition = start + 1;
        }

        /** The range shown in the view: the one moved past in this term until replicated, then the replicated one. */
        UnavailableRange unavailableRange()
        {
            final UnavailableRange replicated = state.unavailableRange(config.id());
            final UnavailableRange pending = pendingSkip;
            return pending == null ? replicated : replicated == null ? pending : replicated.merge(pending);
        }

        /**
         * When the next record was compacted away (the exporter is new here, renamed, re-added after its position
         * went, or its position fell behind by any other cause), moves to the first record the log still holds
         * instead of retrying forever, and says so: once in a WARN line, and in the view until replicated, then in
         * the replicated state. Its acknowledged position moves with it, so it never holds compaction back.
         */
        private void skipCompacted()
        {
            final long firstHeld = state.recordLog().firstPosition();
            if (nextPosition >= firstHeld)
            {
                return;
            }
            final UnavailableRange range = new UnavailableRange(nextPosition, firstHeld - 1);
            LOG.warn("partition {} on broker {}: exporter {} can never export positions {}: they were compacted " +
                    "before it got there (new, renamed or re-added exporter); it goes on from position {}, the " +
                    "oldest the partition holds", partitionId, brokerId, config.id(), range, firstHeld);
            pendingSkip = pendingSkip == null ? range : pendingSkip.merge(range);
            acknowledged.accumulateAndGet(firstHeld - 1, Math::max);
            nextPosition = firstHeld;
        }

        @Override
        public void acknowledge(final long position)
        {
            acknowledged.accumulateAndGet(position, Math::max);
        }

        @Override
        public void sinkWriteCompleted(final int records, final long latencyNanos)
        {
            sinkWrites.incrementAndGet();
            sinkWriteNanos.addAndGet(latencyNanos);
        }

        @Override
        public void deadLettered(final int records)
        {
            deadLetters.addAndGet(records);
        }

        void work(final long nowMs)
        {
            if (nowMs < retryAtMs)
            {
                return;
            }
            try
            {
                if (!opened)
                {
                    exporter = registry.create(config);
                    exporter.configure(new ExporterContext(config.id(), partitionId, brokerId, dataDir,
                        config.exporterProperties()));
                    exporter.open(this);
                    opened = true;
                }
                if (!flushPending)
                {
                    exportAvailable();
                }
                flush();
                if (failures > 0)
                {
                    LOG.info("partition {} on broker {}: exporter {} recovered after {} failures",
                        partitionId, brokerId, config.id(), failures);
                }
                failures = 0;
                retrying = false;
                lastError = null;
                backoffMs = Math.min(MIN_BACKOFF_MS, maxBackoffMs);
            }
            catch (final Exception e)
            {
                failures++;
                totalFailures++;
                lastError = String.valueOf(e.getMessage() == null ? e : e.getMessage());
                retrying = true;
                // Full jitter over the upper half, so the exporters of many partitions do not retry in step.
                final long delayMs = backoffMs / 2 + java.util.concurrent.ThreadLocalRandom.current().nextLong(backoffMs / 2 + 1);
                retryAtMs = nowMs + delayMs;
                if (failures == 1 || failures % 20 == 0)
                {
                    LOG.warn("partition {} on broker {}: exporter {} failed at position {} ({} failures), retrying in {} ms",
                        partitionId, brokerId, config.id(), nextPosition, failures, delayMs, e);
                }
                backoffMs = Math.min(maxBackoffMs, backoffMs * 2);
            }
        }

        /**
         * Lets a buffering exporter send what is due, under the export gate like every export, so nothing reaches
         * the sink once a pause is applied; a failed flush is retried before any further record is handed over.
         */
        private void flush() throws Exception
        {
            exporting.gate().enter();
            try
            {
                if (!active || exporting.state() == ExportingState.PAUSED)
                {
                    return;
                }
                flushPending = true;
                exporter.flush();
                flushPending = false;
            }
            finally
            {
                exporting.gate().exit();
            }
        }

        private void exportAvailable() throws Exception
        {
            while (active)
            {
                // After a reset to latest the replicated position jumps past the backfilled range: follow it.
                nextPosition = Math.max(nextPosition, state.exporterPosition(config.id()) + 1);
                skipCompacted();
                batch.clear();
                final int read = state.recordLog().read(nextPosition, BATCH_RECORDS, batch);
                if (read == 0)
                {
                    return;
                }
                for (int i = 0; i < read; i++)
                {
                    final CommittedRecordView record = batch.select(i);
                    exporting.gate().enter();
                    try
                    {
                        if (!active || exporting.state() == ExportingState.PAUSED ||
                            leaderTerm.getAsLong() != term)
                        {
                            return;
                        }
                        exporter.export(record);
                    }
                    finally
                    {
                        exporting.gate().exit();
                    }
                    nextPosition = record.position() + 1;
                }
            }
        }

        void close()
        {
            if (exporter != null && opened)
            {
                try
                {
                    exporter.close();
                }
                catch (final Exception e)
                {
                    LOG.warn("partition {} on broker {}: exporter {} failed to close", partitionId, brokerId,
                        config.id(), e);
                }
            }
            exporter = null;
            opened = false;
        }
    }
}
