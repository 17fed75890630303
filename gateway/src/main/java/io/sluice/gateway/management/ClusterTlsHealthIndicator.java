package io.sluice.gateway.management;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.tls.TlsFiles;
import io.sluice.protocol.transport.TransportClient;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.stereotype.Component;

import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Health contributor {@code clusterTls} (only with cluster TLS on): when this gateway's certificate and each
 * broker's expire, the brokers' as they presented them in the last handshake, and which expire within
 * {@link #WARNING_WINDOW}. A certificate about to expire does not make the gateway DOWN (it still works), but
 * shows here and in the gauge {@value #EXPIRY_GAUGE} (seconds left, tag {@code peer}: {@code gateway} or
 * {@code broker-<id>}), so an alert can fire a week ahead.
 */
@Component("clusterTls")
@ConditionalOnProperty(name = TlsFiles.ENABLED_SETTING, havingValue = "true")
public class ClusterTlsHealthIndicator extends AbstractHealthIndicator
{
    public static final String EXPIRY_GAUGE = "sluice.cluster.tls.certificate.expiry";
    public static final Duration WARNING_WINDOW = Duration.ofDays(7);

    private final ClusterTls tls;
    private final TransportClient transport;
    private final PartitionDistribution distribution;
    private final Clock clock;

    public ClusterTlsHealthIndicator(
        final ClusterTls tls,
        final TransportClient transport,
        final PartitionDistribution distribution,
        final Clock clock,
        final MeterRegistry meters)
    {
        super("cluster TLS certificates could not be checked");
        this.tls = tls;
        this.transport = transport;
        this.distribution = distribution;
        this.clock = clock;
        Gauge.builder(EXPIRY_GAUGE, () -> secondsLeft(Optional.of(tls.notAfter())))
            .tag("peer", "gateway").baseUnit("seconds")
            .description("Seconds until the cluster TLS certificate expires").register(meters);
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            final InetSocketAddress address = distribution.commandAddress(b);
            Gauge.builder(EXPIRY_GAUGE, () -> secondsLeft(transport.peerCertificateNotAfter(address)))
                .tag("peer", "broker-" + b).baseUnit("seconds")
                .description("Seconds until the cluster TLS certificate expires").register(meters);
        }
    }

    @Override
    protected void doHealthCheck(final Health.Builder builder)
    {
        final Instant warnAfter = clock.instant().plus(WARNING_WINDOW);
        final List<String> expiringSoon = new ArrayList<>();
        final Instant own = tls.notAfter();
        if (!own.isAfter(warnAfter))
        {
            expiringSoon.add("gateway");
        }
        final Map<String, String> brokers = new LinkedHashMap<>();
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            final Optional<Instant> notAfter = transport.peerCertificateNotAfter(distribution.commandAddress(b));
            brokers.put(Integer.toString(b), notAfter.map(Instant::toString).orElse("unknown (not connected yet)"));
            if (notAfter.isPresent() && !notAfter.get().isAfter(warnAfter))
            {
                expiringSoon.add("broker " + b);
            }
        }
        builder.up()
            .withDetail("certificate", tls.subject())
            .withDetail("notAfter", own.toString())
            .withDetail("brokerCertificatesNotAfter", brokers)
            .withDetail("expiringWithin" + WARNING_WINDOW.toDays() + "Days", expiringSoon);
        if (tls.lastReloadFailure() != null)
        {
            builder.withDetail("lastReloadFailure", tls.lastReloadFailure());
        }
    }

    private double secondsLeft(final Optional<Instant> notAfter)
    {
        return notAfter.map((instant) -> (double)Duration.between(clock.instant(), instant).toSeconds()).orElse(Double.NaN);
    }
}
