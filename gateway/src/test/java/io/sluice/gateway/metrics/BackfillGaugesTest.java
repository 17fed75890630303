package io.sluice.gateway.metrics;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.gateway.backfill.BackfillList;
import io.sluice.gateway.backfill.BackfillService;
import io.sluice.gateway.backfill.BackfillView;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.support.StaticListableBeanFactory;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BackfillGaugesTest
{
    private static final long NOW_MS = 10_000_000;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final StaticListableBeanFactory beans =
        new StaticListableBeanFactory(Map.of("clock", Clock.fixed(Instant.ofEpochMilli(NOW_MS), ZoneOffset.UTC)));
    private final BackfillGauges gauges =
        new BackfillGauges(beans.getBeanProvider(BackfillService.class), beans.getBeanProvider(Clock.class));

    @Test
    void showsEachBackfillsProgressAndRateAsListed()
    {
        gauges.bindTo(registry);

        gauges.update(new BackfillList(List.of(view("b-1", "file", "RUNNING", 250, 1000, NOW_MS)), List.of()));

        assertThat(value(BackfillGauges.PROGRESS, "b-1", "file")).isEqualTo(0.25);
        assertThat(value(BackfillGauges.EXPORTED, "b-1", "file")).isEqualTo(250);
        assertThat(value(BackfillGauges.TOTAL, "b-1", "file")).isEqualTo(1000);
        assertThat(value(BackfillGauges.RATE, "b-1", "file")).isEqualTo(12.5);

        gauges.update(new BackfillList(List.of(view("b-1", "file", "RUNNING", 500, 1000, NOW_MS)), List.of()));
        assertThat(value(BackfillGauges.PROGRESS, "b-1", "file")).isEqualTo(0.5);
        assertThat(value(BackfillGauges.EXPORTED, "b-1", "file")).isEqualTo(500);
    }

    @Test
    void finishedBackfillsStayAnHourThenGo()
    {
        gauges.bindTo(registry);
        final long longAgo = NOW_MS - BackfillGauges.FINISHED_RETENTION.toMillis() - 1;

        gauges.update(new BackfillList(List.of(
            view("recent", "file", "SUCCEEDED", 1000, 1000, NOW_MS - 1000),
            view("old", "file", "SUCCEEDED", 1000, 1000, longAgo),
            view("stuck", "file", "RUNNING", 10, 1000, longAgo)), List.of()));

        assertThat(value(BackfillGauges.PROGRESS, "recent", "file")).isEqualTo(1.0);
        assertThat(value(BackfillGauges.PROGRESS, "stuck", "file")).isEqualTo(0.01);
        assertThat(registry.find(BackfillGauges.PROGRESS).tag("backfill", "old").gauges()).isEmpty();

        gauges.update(new BackfillList(List.of(), List.of()));
        assertThat(registry.find(BackfillGauges.PROGRESS).gauges()).isEmpty();
    }

    @Test
    void withoutABackfillServicePollingDoesNothing()
    {
        gauges.bindTo(registry);
        gauges.poll(java.time.Duration.ofSeconds(1));
        assertThat(registry.find(BackfillGauges.PROGRESS).gauges()).isEmpty();
    }

    private static BackfillView view(
        final String id, final String exporter, final String state, final long exported, final long total, final long updatedAtMs)
    {
        return new BackfillView(id, exporter, state, (double)exported / total, exported / 20.0, exported, total,
            updatedAtMs - 20_000, updatedAtMs, List.of(), List.of(), List.of());
    }

    private double value(final String name, final String backfill, final String exporter)
    {
        return registry.get(name).tags("backfill", backfill, "exporter", exporter).gauge().value();
    }
}
