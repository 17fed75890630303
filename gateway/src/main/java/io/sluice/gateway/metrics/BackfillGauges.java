package io.sluice.gateway.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.sluice.gateway.backfill.BackfillList;
import io.sluice.gateway.backfill.BackfillService;
import io.sluice.gateway.backfill.BackfillView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Backfill gauges per (backfill, exporter), from the backfill service's list as last polled:
 * {@code sluice_backfill_progress_ratio} (0..1), {@code sluice_backfill_exported_positions},
 * {@code sluice_backfill_total_positions} and {@code sluice_backfill_positions_per_second} (since it was
 * created). Listing asks every partition leader, so it is polled at a modest interval, one poll at a time,
 * never per scrape. Unfinished backfills are shown, and finished ones for an hour after their last update so
 * a dashboard sees them reach 1 (or fail) without the series growing without bound.
 */
@Component
public class BackfillGauges implements MeterBinder
{
    public static final String PROGRESS = "sluice.backfill.progress.ratio";
    public static final String EXPORTED = "sluice.backfill.exported.positions";
    public static final String TOTAL = "sluice.backfill.total.positions";
    public static final String RATE = "sluice.backfill.positions.per.second";

    static final Duration FINISHED_RETENTION = Duration.ofHours(1);
    private static final Set<String> UNFINISHED = Set.of("PENDING", "RUNNING");
    private static final Logger LOG = LoggerFactory.getLogger(BackfillGauges.class);

    private final ObjectProvider<BackfillService> service;
    private final Clock clock;
    private final AtomicBoolean polling = new AtomicBoolean();
    private volatile MultiGauge progress;
    private volatile MultiGauge exported;
    private volatile MultiGauge total;
    private volatile MultiGauge rate;

    public BackfillGauges(final ObjectProvider<BackfillService> service, final ObjectProvider<Clock> clock)
    {
        this.service = service;
        this.clock = clock.getIfAvailable(Clock::systemUTC);
    }

    @Override
    public void bindTo(final MeterRegistry registry)
    {
        progress = MultiGauge.builder(PROGRESS).description("Fraction of the backfill's positions exported, 0..1")
            .register(registry);
        exported = MultiGauge.builder(EXPORTED).description("Positions the backfill has exported")
            .register(registry);
        total = MultiGauge.builder(TOTAL).description("Positions the backfill has to export")
            .register(registry);
        rate = MultiGauge.builder(RATE).description("Positions exported per second since the backfill was created")
            .register(registry);
    }

    /** Starts one poll of the backfill list unless one is still running or there is no backfill service. */
    public void poll(final Duration timeout)
    {
        final BackfillService backfills = service.getIfAvailable();
        if (backfills == null || progress == null || !polling.compareAndSet(false, true))
        {
            return;
        }
        try
        {
            backfills.list()
                .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((list, error) ->
                {
                    polling.set(false);
                    if (error != null)
                    {
                        LOG.debug("Backfill gauges not updated: listing backfills failed: {}", error.toString());
                    }
                    else
                    {
                        update(list);
                    }
                });
        }
        catch (final RuntimeException e)
        {
            polling.set(false);
            LOG.debug("Backfill gauges not updated: listing backfills failed: {}", e.toString());
        }
    }

    /** Replaces every backfill series with the figures of the list. */
    public void update(final BackfillList list)
    {
        if (progress == null)
        {
            return;
        }
        final long nowMs = clock.millis();
        final List<MultiGauge.Row<?>> progressRows = new ArrayList<>();
        final List<MultiGauge.Row<?>> exportedRows = new ArrayList<>();
        final List<MultiGauge.Row<?>> totalRows = new ArrayList<>();
        final List<MultiGauge.Row<?>> rateRows = new ArrayList<>();
        for (final BackfillView backfill : list.backfills())
        {
            if (!UNFINISHED.contains(backfill.state()) && nowMs - backfill.updatedAtMs() > FINISHED_RETENTION.toMillis())
            {
                continue;
            }
            final Tags tags = Tags.of("backfill", backfill.backfillId(), "exporter", backfill.exporterId());
            progressRows.add(MultiGauge.Row.of(tags, backfill.progress()));
            exportedRows.add(MultiGauge.Row.of(tags, backfill.exportedPositions()));
            totalRows.add(MultiGauge.Row.of(tags, backfill.totalPositions()));
            rateRows.add(MultiGauge.Row.of(tags, backfill.ratePerSecond()));
        }
        progress.register(progressRows, true);
        exported.register(exportedRows, true);
        total.register(totalRows, true);
        rate.register(rateRows, true);
    }
}
