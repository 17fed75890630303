package io.sluice.gateway.config;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

import java.time.Duration;

/** The {@code sluice.gateway.*} settings. */
@ConfigurationProperties(prefix = "sluice.gateway")
public class GatewayProperties
{
    /** Deadline of one request to the brokers: an admin request to one pair, or one client append. */
    private Duration requestTimeout = Duration.ofSeconds(5);

    /** Largest accepted record payload, as JSON text. */
    private DataSize maxPayloadBytes = DataSize.ofMegabytes(1);

    /** Largest accepted request body (one record or an array of them). */
    private DataSize maxRequestBytes = DataSize.ofMegabytes(64);

    /** How often every broker is asked for its topology. */
    private Duration topologyPollInterval = Duration.ofMillis(500);

    /** Deadline of one topology poll; a broker that misses it counts as unreachable. */
    private Duration topologyPollTimeout = Duration.ofMillis(1500);

    public Duration getRequestTimeout()
    {
        return requestTimeout;
    }

    public void setRequestTimeout(final Duration requestTimeout)
    {
        this.requestTimeout = requestTimeout;
    }

    public DataSize getMaxPayloadBytes()
    {
        return maxPayloadBytes;
    }

    public void setMaxPayloadBytes(final DataSize maxPayloadBytes)
    {
        this.maxPayloadBytes = maxPayloadBytes;
    }

    public DataSize getMaxRequestBytes()
    {
        return maxRequestBytes;
    }

    public void setMaxRequestBytes(final DataSize maxRequestBytes)
    {
        this.maxRequestBytes = maxRequestBytes;
    }

    public Duration getTopologyPollInterval()
    {
        return topologyPollInterval;
    }

    public void setTopologyPollInterval(final Duration topologyPollInterval)
    {
        this.topologyPollInterval = topologyPollInterval;
    }

    public Duration getTopologyPollTimeout()
    {
        return topologyPollTimeout;
    }

    public void setTopologyPollTimeout(final Duration topologyPollTimeout)
    {
        this.topologyPollTimeout = topologyPollTimeout;
    }
}
