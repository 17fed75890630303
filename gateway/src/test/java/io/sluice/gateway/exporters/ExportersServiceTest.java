package io.sluice.gateway.exporters;

import io.sluice.gateway.exporting.FakeClusterTopology;
import io.sluice.protocol.cluster.ExporterStatus;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;
import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

final class ExportersServiceTest
{
    private final FakeClusterTopology topology = FakeClusterTopology.threeBrokersSixPartitions();
    private final Map<Integer, CompletableFuture<PartitionExporters>> answers = new HashMap<>();
    private final ExportersService service = new ExportersService(topology,
        (brokerId, partitionId, timeout) -> answers.getOrDefault(partitionId,
            CompletableFuture.failedFuture(new ConnectException("broker " + brokerId + " unreachable"))),
        Duration.ofSeconds(1));

    private void leads(final int brokerId, final int partitionId, final long lastPosition, final long replicatedPosition)
    {
        topology.leader(partitionId, brokerId).report(new PartitionReplica(brokerId, partitionId),
            new PartitionStatus(partitionId, PartitionRole.LEADER, 1, brokerId, ExportingState.EXPORTING,
                1, lastPosition, replicatedPosition, Map.of("search", replicatedPosition)));
    }

    private void answers(final int partitionId, final ExportingState state, final long lastPosition,
                         final ExporterStatus... exporters)
    {
        answers.put(partitionId, CompletableFuture.completedFuture(
            new PartitionExporters(partitionId, state, lastPosition, List.of(exporters))));
    }

    private static ExporterStatus search(final long position, final boolean retrying, final String error)
    {
        return new ExporterStatus("search", "opensearch", position, retrying, error, retrying ? 3 : 0, 0, 10, 1000);
    }

    @Test
    void eachPartitionShowsItsLeadersPositionLagAndStateWithRetryingAndPausesDistinguished()
    {
        for (int partitionId = 1; partitionId <= 6; partitionId++)
        {
            leads(partitionId % 3, partitionId, 100, 50);
        }
        answers(1, ExportingState.EXPORTING, 100, search(96, false, null));
        answers(2, ExportingState.EXPORTING, 100, search(40, true, "Connection refused"));
        answers(3, ExportingState.PAUSED, 100, search(60, true, "Connection refused"));
        answers(4, ExportingState.SOFT_PAUSED, 100, search(100, false, null));
        answers(5, ExportingState.EXPORTING, 100);
        // partition 6: the leader does not answer

        final ExportersView view = service.view().join();

        assertThat(view.exporters()).hasSize(1);
        final ExportersView.Exporter search = view.exporters().get(0);
        assertThat(search.id()).isEqualTo("search");
        assertThat(search.type()).isEqualTo("opensearch");
        assertThat(search.partitions()).containsExactly(
            new ExportersView.Partition(1, 96, 4, "EXPORTING", null),
            new ExportersView.Partition(2, 40, 60, "RETRYING", "Connection refused"),
            new ExportersView.Partition(3, 60, 40, "PAUSED", "Connection refused"),
            new ExportersView.Partition(4, 100, 0, "SOFT_PAUSED", null),
            new ExportersView.Partition(5, 50, 50, -1, -1, "UNKNOWN",
                "exporter search is not running on partition 5's leader", List.of()),
            new ExportersView.Partition(6, 50, 50, -1, -1, "UNKNOWN", "broker 0 unreachable", List.of()));
    }

    @Test
    void aPartitionWithoutAReachableLeaderIsUnknownWithUnknownPositions()
    {
        for (int partitionId = 2; partitionId <= 6; partitionId++)
        {
            leads(partitionId % 3, partitionId, 10, 10);
            answers(partitionId, ExportingState.EXPORTING, 10, search(10, false, null));
        }
        final ExportersView.Partition first = service.view().join().exporters().get(0).partitions().get(0);
        assertThat(first).isEqualTo(new ExportersView.Partition(1, -1, -1, -1, -1, "UNKNOWN",
            "partition 1 has no reachable leader", List.of()));
    }

    @Test
    void duringASoftPauseAPartitionShowsTheHeldAcknowledgedPositionAndTheSentOneAheadEachWithItsLag()
    {
        for (int partitionId = 1; partitionId <= 6; partitionId++)
        {
            leads(partitionId % 3, partitionId, 100, 60);
            answers(partitionId, ExportingState.SOFT_PAUSED, 100,
                new ExporterStatus("search", "opensearch", 60, false, null, 0, 0, 4, 1000, 0, 0, 97));
        }

        final ExportersView.Partition first = service.view().join().exporters().get(0).partitions().get(0);

        assertThat(first).isEqualTo(new ExportersView.Partition(1, 60, 40, 97, 3, "SOFT_PAUSED", null, List.of()));
    }

    @Test
    void theRangeAnExporterCanNeverExportIsShownUnderUnavailable()
    {
        for (int partitionId = 1; partitionId <= 6; partitionId++)
        {
            leads(partitionId % 3, partitionId, 100, 50);
            answers(partitionId, ExportingState.EXPORTING, 100, partitionId == 2 ?
                new ExporterStatus("search", "opensearch", 60, false, null, 0, 0, 0, 0, 1, 40) :
                search(100, false, null));
        }

        final List<ExportersView.Partition> partitions = service.view().join().exporters().get(0).partitions();

        assertThat(partitions.get(1)).isEqualTo(new ExportersView.Partition(2, 60, 40, "EXPORTING", null,
            List.of(new ExportersView.Range(1, 40))));
        assertThat(partitions.get(0).unavailable()).isEmpty();
    }
}
