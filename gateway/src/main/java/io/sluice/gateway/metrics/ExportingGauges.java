package io.sluice.gateway.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import org.springframework.stereotype.Component;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Exporting gauges read from the topology at scrape time, never from a broker:
 * {@code sluice_exporting_state{broker,partition,state}} (one series per state, 1 for the current one),
 * and per exporter and partition, from the leader's report, {@code sluice_exporter_position} and
 * {@code sluice_exporter_lag_records}. Exporter ids are only known once leaders report them, so
 * {@link #refresh()} (called periodically by {@link MetricsRefresher}) adds and drops those series.
 */
@Component
public class ExportingGauges implements MeterBinder
{
    public static final String STATE = "sluice.exporting.state";
    public static final String EXPORTER_POSITION = "sluice.exporter.position";
    public static final String EXPORTER_LAG = "sluice.exporter.lag.records";
    public static final String HELD_SECONDS = "sluice.exporting.held.seconds";
    public static final String LEASE_EXPIRIES = "sluice.exporting.lease.expiries";

    private final ClusterTopology topology;
    private volatile MultiGauge positions;
    private volatile MultiGauge lags;

    public ExportingGauges(final ClusterTopology topology)
    {
        this.topology = topology;
    }

    @Override
    public void bindTo(final MeterRegistry registry)
    {
        for (final PartitionReplica replica : topology.distribution().replicas())
        {
            for (final String state : ExportingFigures.STATES)
            {
                Gauge.builder(STATE, () -> ExportingFigures.stateValue(topology, replica, state))
                    .description("1 for the pair's current exporting state, 0 for the others")
                    .tag("broker", Integer.toString(replica.brokerId()))
                    .tag("partition", Integer.toString(replica.partitionId()))
                    .tag("state", state)
                    .register(registry);
            }
        }
        for (final PartitionReplica replica : topology.distribution().replicas())
        {
            Gauge.builder(HELD_SECONDS, () -> heldSeconds(replica))
                .description("Seconds the pair has been paused or soft-paused (0 while exporting or unknown): nothing " +
                    "is compacted meanwhile")
                .tag("broker", Integer.toString(replica.brokerId()))
                .tag("partition", Integer.toString(replica.partitionId()))
                .register(registry);
        }
        io.micrometer.core.instrument.FunctionCounter.builder(LEASE_EXPIRIES, topology, ClusterTopology::leaseExpiries)
            .description("Pause leases that ran out and resumed exporting by themselves")
            .register(registry);
        positions = MultiGauge.builder(EXPORTER_POSITION)
            .description("Acknowledged position of the exporter on the partition, as the leader reports it")
            .register(registry);
        lags = MultiGauge.builder(EXPORTER_LAG)
            .description("Last committed position minus the exporter's acknowledged position, from the leader's report")
            .register(registry);
        refresh();
    }

    /** Seconds since the pair's hold began, by this gateway's clock; 0 when it is not held or the time is unknown. */
    private double heldSeconds(final PartitionReplica replica)
    {
        final Optional<PartitionStatus> status = topology.isReachable(replica.brokerId()) ? topology.status(replica) :
            Optional.empty();
        if (status.isEmpty() || status.get().exportingState() == null ||
            status.get().exportingState() == io.sluice.protocol.codecs.ExportingState.EXPORTING ||
            status.get().hold().sinceMicros() <= 0)
        {
            return 0;
        }
        final java.time.Instant now = java.time.Instant.now();
        final long nowMicros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
        return Math.max(0, nowMicros - status.get().hold().sinceMicros()) / 1e6;
    }

    /** Registers a position and lag series for every (exporter, partition) the leaders now report. */
    public void refresh()
    {
        final MultiGauge positions = this.positions;
        final MultiGauge lags = this.lags;
        if (positions == null || lags == null)
        {
            return;
        }
        final List<MultiGauge.Row<?>> positionRows = new ArrayList<>();
        final List<MultiGauge.Row<?>> lagRows = new ArrayList<>();
        for (int p = 1; p <= topology.distribution().partitionCount(); p++)
        {
            final int partitionId = p;
            final Optional<PartitionStatus> status = ExportingFigures.leaderStatus(topology, partitionId);
            if (status.isEmpty() || status.get().exporterPositions() == null)
            {
                continue;
            }
            for (final String exporterId : new TreeSet<>(status.get().exporterPositions().keySet()))
            {
                final Tags tags = Tags.of("exporter", exporterId, "partition", Integer.toString(partitionId));
                positionRows.add(MultiGauge.Row.of(tags, topology, t -> ExportingFigures.exporterPosition(t, partitionId, exporterId)));
                lagRows.add(MultiGauge.Row.of(tags, topology, t -> ExportingFigures.lag(t, partitionId, exporterId)));
            }
        }
        // The rows hold the same topology object each time, so unchanged series are kept, not re-registered.
        positions.register(positionRows, false);
        lags.register(lagRows, false);
    }
}
