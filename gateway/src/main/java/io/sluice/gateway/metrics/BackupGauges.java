package io.sluice.gateway.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.sluice.gateway.backup.BackupService;
import io.sluice.gateway.backup.BackupView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;

/**
 * Backup gauges from the store's list of backups, read at most every {@link #REFRESH} (a scrape between reads sees the
 * last one): {@code sluice_backups{state}} (how many backups are in each state), {@code
 * sluice_backup_last_success_age_seconds} (since the newest COMPLETED backup completed; NaN without one, which an
 * alert on age treats as missing) and {@code sluice_backup_last_success_bytes} (its stored size).
 */
@Component
public class BackupGauges implements MeterBinder
{
    public static final String BACKUPS = "sluice.backups";
    public static final String LAST_SUCCESS_AGE = "sluice.backup.last.success.age.seconds";
    public static final String LAST_SUCCESS_BYTES = "sluice.backup.last.success.bytes";
    static final Duration REFRESH = Duration.ofSeconds(10);
    private static final Logger LOG = LoggerFactory.getLogger(BackupGauges.class);

    private final ObjectProvider<BackupService> service;
    private final Clock clock;
    private volatile Summary summary = new Summary(new EnumMap<>(BackupView.BackupState.class), null, Double.NaN,
        Instant.EPOCH);

    private record Summary(Map<BackupView.BackupState, Integer> byState, Instant lastSuccess, double lastSuccessBytes,
        Instant readAt)
    {
    }

    public BackupGauges(final ObjectProvider<BackupService> service, final ObjectProvider<Clock> clock)
    {
        this.service = service;
        this.clock = clock.getIfAvailable(Clock::systemUTC);
    }

    @Override
    public void bindTo(final MeterRegistry registry)
    {
        for (final BackupView.BackupState state : BackupView.BackupState.values())
        {
            Gauge.builder(BACKUPS, this, (g) -> g.summary().byState().getOrDefault(state, 0))
                .tag("state", state.name()).description("Backups in the store in this state").register(registry);
        }
        Gauge.builder(LAST_SUCCESS_AGE, this, (g) ->
            {
                final Instant last = g.summary().lastSuccess();
                return last == null ? Double.NaN : Duration.between(last, clock.instant()).toMillis() / 1000.0;
            })
            .description("Seconds since the newest completed backup completed").register(registry);
        Gauge.builder(LAST_SUCCESS_BYTES, this, (g) -> g.summary().lastSuccessBytes())
            .description("Bytes stored by the newest completed backup").register(registry);
    }

    private Summary summary()
    {
        final Summary current = summary;
        final BackupService backups = service.getIfAvailable();
        if (backups == null || Duration.between(current.readAt(), clock.instant()).compareTo(REFRESH) < 0)
        {
            return current;
        }
        try
        {
            final Map<BackupView.BackupState, Integer> byState = new EnumMap<>(BackupView.BackupState.class);
            Instant lastSuccess = null;
            double lastBytes = Double.NaN;
            for (final BackupView backup : backups.list().backups())
            {
                byState.merge(backup.state(), 1, Integer::sum);
                if (backup.state() == BackupView.BackupState.COMPLETED && lastSuccess == null)
                {
                    lastSuccess = Instant.parse(backup.completedAt());
                    lastBytes = backup.bytes();
                }
            }
            summary = new Summary(byState, lastSuccess, lastBytes, clock.instant());
        }
        catch (final RuntimeException e)
        {
            LOG.debug("Backup gauges not updated: listing backups failed: {}", e.toString());
            summary = new Summary(current.byState(), current.lastSuccess(), current.lastSuccessBytes(), clock.instant());
        }
        return summary;
    }
}
