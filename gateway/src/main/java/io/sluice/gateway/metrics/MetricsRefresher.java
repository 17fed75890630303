package io.sluice.gateway.metrics;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Keeps the gauges whose series come and go up to date on one daemon thread: exporter series from the
 * topology (cheap, no broker calls) and backfill series from a backfill listing (one request per leader,
 * hence the longer interval).
 */
@Component
public class MetricsRefresher implements InitializingBean, DisposableBean
{
    private static final Logger LOG = LoggerFactory.getLogger(MetricsRefresher.class);

    private final ExportingGauges exportingGauges;
    private final BackfillGauges backfillGauges;
    /** Optional: a context without the exporters view (some tests) has no exporter gauges. */
    private final ObjectProvider<ExporterGauges> exporterGauges;
    private final Duration exporterPollInterval;
    private final Duration exportingInterval;
    private final Duration backfillInterval;
    private ScheduledExecutorService scheduler;

    public MetricsRefresher(
        final ExportingGauges exportingGauges,
        final BackfillGauges backfillGauges,
        @Value("${sluice.gateway.metrics.exporter-refresh-interval:5s}") final Duration exportingInterval,
        @Value("${sluice.gateway.metrics.backfill-poll-interval:30s}") final Duration backfillInterval,
        final ObjectProvider<ExporterGauges> exporterGauges,
        @Value("${sluice.gateway.metrics.exporter-poll-interval:10s}") final Duration exporterPollInterval)
    {
        if (exporterPollInterval.isNegative() || exporterPollInterval.isZero())
        {
            throw new IllegalArgumentException(
                "sluice.gateway.metrics.exporter-poll-interval must be positive, was " + exporterPollInterval);
        }
        this.exporterGauges = exporterGauges;
        this.exporterPollInterval = exporterPollInterval;
        if (exportingInterval.isNegative() || exportingInterval.isZero())
        {
            throw new IllegalArgumentException(
                "sluice.gateway.metrics.exporter-refresh-interval must be positive, was " + exportingInterval);
        }
        if (backfillInterval.isNegative() || backfillInterval.isZero())
        {
            throw new IllegalArgumentException(
                "sluice.gateway.metrics.backfill-poll-interval must be positive, was " + backfillInterval);
        }
        this.exportingGauges = exportingGauges;
        this.backfillGauges = backfillGauges;
        this.exportingInterval = exportingInterval;
        this.backfillInterval = backfillInterval;
    }

    @Override
    public void afterPropertiesSet()
    {
        scheduler = Executors.newSingleThreadScheduledExecutor(runnable ->
        {
            final Thread thread = new Thread(runnable, "sluice-metrics-refresh");
            thread.setDaemon(true);
            return thread;
        });
        scheduler.scheduleWithFixedDelay(
            guarded(exportingGauges::refresh), 0, exportingInterval.toMillis(), TimeUnit.MILLISECONDS);
        scheduler.scheduleWithFixedDelay(
            guarded(() -> backfillGauges.poll(backfillInterval)), 0, backfillInterval.toMillis(), TimeUnit.MILLISECONDS);
        final ExporterGauges exporters = exporterGauges.getIfAvailable();
        if (exporters != null)
        {
            scheduler.scheduleWithFixedDelay(guarded(() -> exporters.poll(exporterPollInterval)), 0,
                exporterPollInterval.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public void destroy()
    {
        scheduler.shutdownNow();
    }

    /** A periodic task that throws is never run again, so a failed refresh must not escape. */
    private static Runnable guarded(final Runnable task)
    {
        return () ->
        {
            try
            {
                task.run();
            }
            catch (final RuntimeException e)
            {
                LOG.warn("Metrics refresh failed: {}", e.toString());
            }
        };
    }
}
