package io.sluice.gateway.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.sluice.gateway.exporting.ExportingOperationListener;
import io.sluice.gateway.exporting.ExportingOperationResult;
import io.sluice.gateway.exporting.TargetResult;
import org.springframework.stereotype.Component;

import java.util.concurrent.TimeUnit;

/**
 * Records each exporting operation's fan-out latency by operation and overall result
 * ({@code sluice_exporting_operation_seconds}, a histogram whose {@code _count} is the number of operations,
 * so no separate counter), and each pair's outcome ({@code sluice_exporting_target_outcomes_total}).
 */
@Component
public class ExportingOperationMetrics implements ExportingOperationListener
{
    public static final String OPERATION_TIMER = "sluice.exporting.operation";
    public static final String TARGET_OUTCOMES = "sluice.exporting.target.outcomes";

    private final MeterRegistry registry;

    public ExportingOperationMetrics(final MeterRegistry registry)
    {
        this.registry = registry;
    }

    @Override
    public void operationCompleted(final ExportingOperationResult result, final long elapsedNanos)
    {
        final String operation = result.operation().name();
        Timer.builder(OPERATION_TIMER)
            .description("Fan-out latency of a pause, soft pause or resume over all its pairs")
            .tag("operation", operation)
            .tag("result", result.result().name())
            .publishPercentileHistogram()
            .register(registry)
            .record(elapsedNanos, TimeUnit.NANOSECONDS);
        for (final TargetResult target : result.targets())
        {
            Counter.builder(TARGET_OUTCOMES)
                .description("Per-pair outcomes of exporting operations")
                .tag("operation", operation)
                .tag("outcome", target.outcome().name())
                .register(registry)
                .increment();
        }
    }
}
