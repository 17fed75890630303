package io.sluice.gateway.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.ExportingState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ExportingGaugesTest
{
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MutableTopology topology = new MutableTopology();
    private final ExportingGauges gauges = new ExportingGauges(topology);

    @Test
    void lagIsTheLeadersLastPositionMinusTheExportersPosition()
    {
        topology.allExporting(100, Map.of("file", 60L, "audit", 95L));
        gauges.bindTo(registry);

        assertThat(value(ExportingGauges.EXPORTER_POSITION, "exporter", "file", "partition", "1")).isEqualTo(60);
        assertThat(value(ExportingGauges.EXPORTER_LAG, "exporter", "file", "partition", "1")).isEqualTo(40);
        assertThat(value(ExportingGauges.EXPORTER_LAG, "exporter", "audit", "partition", "2")).isEqualTo(5);

        // Only the leader's report counts: a follower of partition 1 lagging further changes nothing.
        topology.report(new PartitionReplica(2, 1), ExportingState.EXPORTING, 90, Map.of("file", 10L, "audit", 10L));
        assertThat(value(ExportingGauges.EXPORTER_LAG, "exporter", "file", "partition", "1")).isEqualTo(40);

        // The leader's newer report is read at scrape time, without a refresh.
        topology.report(new PartitionReplica(0, 1), ExportingState.EXPORTING, 130, Map.of("file", 70L, "audit", 95L));
        assertThat(value(ExportingGauges.EXPORTER_POSITION, "exporter", "file", "partition", "1")).isEqualTo(70);
        assertThat(value(ExportingGauges.EXPORTER_LAG, "exporter", "file", "partition", "1")).isEqualTo(60);
    }

    @Test
    void exporterSeriesFollowWhatTheLeadersReport()
    {
        topology.allExporting(100, Map.of("file", 60L));
        gauges.bindTo(registry);
        assertThat(registry.find(ExportingGauges.EXPORTER_LAG).gauges()).hasSize(2);

        topology.report(new PartitionReplica(1, 2), ExportingState.EXPORTING, 100, Map.of("file", 60L, "audit", 1L));
        gauges.refresh();
        assertThat(value(ExportingGauges.EXPORTER_LAG, "exporter", "audit", "partition", "2")).isEqualTo(99);
        assertThat(registry.find(ExportingGauges.EXPORTER_LAG).gauges()).hasSize(3);

        // The leader of partition 2 goes away: its series read NaN, and are dropped on the next refresh.
        topology.setReachable(1, false);
        assertThat(value(ExportingGauges.EXPORTER_LAG, "exporter", "audit", "partition", "2")).isNaN();
        gauges.refresh();
        assertThat(registry.find(ExportingGauges.EXPORTER_LAG).tag("partition", "2").gauges()).isEmpty();
        assertThat(registry.find(ExportingGauges.EXPORTER_LAG).tag("partition", "1").gauges()).hasSize(1);
    }

    @Test
    void exactlyTheCurrentStateOfAPairIsOne()
    {
        topology.allExporting(100, Map.of("file", 60L));
        gauges.bindTo(registry);
        assertThat(registry.find(ExportingGauges.STATE).gauges()).hasSize(3 * 2 * ExportingFigures.STATES.length);

        assertStates("0", "1", "EXPORTING");

        topology.setState(new PartitionReplica(0, 1), ExportingState.PAUSED);
        assertStates("0", "1", "PAUSED");
        assertStates("1", "1", "EXPORTING");

        topology.setState(new PartitionReplica(0, 1), ExportingState.SOFT_PAUSED);
        assertStates("0", "1", "SOFT_PAUSED");

        topology.setReachable(0, false);
        assertStates("0", "1", "UNKNOWN");
        assertStates("0", "2", "UNKNOWN");
    }

    private void assertStates(final String broker, final String partition, final String current)
    {
        for (final String state : ExportingFigures.STATES)
        {
            assertThat(value(ExportingGauges.STATE, "broker", broker, "partition", partition, "state", state))
                .as("broker %s partition %s state %s", broker, partition, state)
                .isEqualTo(state.equals(current) ? 1.0 : 0.0);
        }
    }

    private double value(final String name, final String... tags)
    {
        final Gauge gauge = registry.find(name).tags(tags).gauge();
        assertThat(gauge).as("%s %s", name, String.join(",", tags)).isNotNull();
        return gauge.value();
    }
}
