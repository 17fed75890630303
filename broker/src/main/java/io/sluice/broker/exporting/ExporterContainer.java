package io.sluice.broker.exporting;

import io.sluice.broker.exporter.CommittedRecordBatch;
import io.sluice.broker.exporter.CommittedRecordView;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.ExporterRegistry;
import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterController;
import io.sluice.protocol.codecs.ExportingState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One exporter instance of a partition's {@link ExporterDirector} for one leadership term: opens it, hands it the
 * records from its position on, each inside the export gate, flushes it, retries a failure with capped, jittered
 * backoff without skipping the record, and moves past a range the log no longer holds. Its figures are read by
 * status requests on other threads; the rest runs on the director's thread, one run at a time.
 */
final class ExporterContainer implements ExporterController
{
    /** The director's log: an exporter's lines stay where operators look for them. */
    private static final Logger LOG = LoggerFactory.getLogger(ExporterDirector.class);
    private static final int BATCH_RECORDS = 512;
    private static final long MIN_BACKOFF_MS = 50;

    private final ExporterDirector director;
    private final int partitionId;
    private final int brokerId;
    private final ExportedState state;
    private final ExportingView exporting;
    final ExporterConfig config;
    /** What the exporter acknowledged (its sink has it); replicated by the director unless the partition is held. */
    final AtomicLong acknowledged = new AtomicLong();
    /** The last position handed to the exporter for its sink (it may still be buffered or in a bulk in flight). */
    private volatile long sent;
    final AtomicLong deadLetters = new AtomicLong();
    final AtomicLong sinkWrites = new AtomicLong();
    final AtomicLong sinkWriteNanos = new AtomicLong();
    private final long maxBackoffMs;
    private Exporter exporter;
    private boolean opened;
    private long nextPosition;
    private long retryAtMs;
    private long backoffMs;
    private int failures;
    private boolean flushPending;
    volatile long totalFailures;
    /** Read by status requests on other threads. */
    volatile boolean retrying;
    volatile String lastError;
    /** The compacted range this term moved past, until its positions entry committed; the director's thread. */
    volatile UnavailableRange pendingSkip;
    /** Started from latest with no replicated position: the start is replicated even before any record. */
    final boolean mustRecordStart;

    ExporterContainer(final ExporterDirector director, final ExporterConfig config)
    {
        this.director = director;
        this.partitionId = director.partitionId();
        this.brokerId = director.brokerId();
        this.state = director.state();
        this.exporting = director.exporting();
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
        this.sent = start;
        this.nextPosition = start + 1;
    }

    /**
     * The acknowledged position every view shows: the replicated one, which compaction and a new leader go by (an
     * exporter's own acknowledgements count once replicated; a soft pause holds them back). Any thread.
     */
    long acknowledgedPosition()
    {
        return state.exporterPosition(config.id());
    }

    /**
     * The last position sent to the sink: handed to the exporter in this term, and never behind the acknowledged
     * one (after a reset to latest the acknowledged position jumps ahead of what this term sent). Any thread.
     */
    long sentPosition()
    {
        return Math.max(sent, acknowledgedPosition());
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
        sent = Math.max(sent, firstHeld - 1);
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
                exporter = director.registry().create(config);
                exporter.configure(new ExporterContext(config.id(), partitionId, brokerId, director.dataDir(),
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
            final long delayMs = backoffMs / 2 + ThreadLocalRandom.current().nextLong(backoffMs / 2 + 1);
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
            if (!director.isActive() || exporting.state() == ExportingState.PAUSED)
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
        while (director.isActive())
        {
            // After a reset to latest the replicated position jumps past the backfilled range: follow it.
            nextPosition = Math.max(nextPosition, state.exporterPosition(config.id()) + 1);
            skipCompacted();
            final CommittedRecordBatch batch = director.batch();
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
                    if (!director.isActive() || exporting.state() == ExportingState.PAUSED ||
                        !director.leadsItsTerm())
                    {
                        return;
                    }
                    exporter.export(record);
                }
                finally
                {
                    exporting.gate().exit();
                }
                sent = record.position();
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
