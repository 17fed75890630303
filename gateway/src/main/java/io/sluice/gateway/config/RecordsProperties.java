package io.sluice.gateway.config;

import org.springframework.boot.context.properties.ConfigurationProperties;

import java.time.Duration;

/** The {@code sluice.records.*} settings. */
@ConfigurationProperties(prefix = "sluice.records")
public class RecordsProperties
{
    /** How long a partition remembers an {@code Idempotency-Key} (CONTRACT §2). */
    private Duration idempotencyWindow = Duration.ofMinutes(10);

    public Duration getIdempotencyWindow()
    {
        return idempotencyWindow;
    }

    public void setIdempotencyWindow(final Duration idempotencyWindow)
    {
        if (idempotencyWindow == null || idempotencyWindow.isNegative() || idempotencyWindow.isZero())
        {
            throw new IllegalArgumentException("sluice.records.idempotency-window must be positive, was " + idempotencyWindow);
        }
        this.idempotencyWindow = idempotencyWindow;
    }
}
