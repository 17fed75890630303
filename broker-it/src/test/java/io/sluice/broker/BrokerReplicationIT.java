package io.sluice.broker;

import io.sluice.protocol.codecs.TopologyResponseDecoder;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Three (or four) real brokers in this JVM: records survive leader changes and restarts, and are all exported. */
class BrokerReplicationIT
{
    @TempDir
    Path dataDir;

    @AutoClose
    private TestCluster cluster;

    @Test
    @Timeout(180)
    void recordsAcrossLeaderTransferAndLeaderKillAreAllExportedInOrder() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 2, 3);
        final int partitionId = 1;
        final int firstLeader = cluster.awaitLeader(partitionId);

        final List<Long> positions = new ArrayList<>(cluster.appendRecords(partitionId, 50, 10, "before"));
        assertThat(positions.get(0)).isEqualTo(1L);

        final int target = (firstLeader + 1) % 3;
        cluster.transferLeadership(partitionId, target);
        org.awaitility.Awaitility.await("partition 1 led by broker " + target).atMost(java.time.Duration.ofSeconds(30))
            .pollInterval(java.time.Duration.ofMillis(50)).until(() -> cluster.leaderOf(partitionId) == target);
        positions.addAll(cluster.appendRecords(partitionId, 50, 10, "transfer"));
        cluster.awaitLeader(partitionId);

        final int leaderBeforeKill = cluster.awaitLeader(partitionId);
        cluster.crashBroker(leaderBeforeKill);
        positions.addAll(cluster.appendRecords(partitionId, 50, 10, "kill"));
        final int newLeader = cluster.awaitLeader(partitionId);
        assertThat(newLeader).isNotEqualTo(leaderBeforeKill);

        assertThat(positions).hasSize(150);
        for (int i = 0; i < positions.size(); i++)
        {
            assertThat(positions.get(i)).as("positions dense from 1").isEqualTo(i + 1L);
        }
        cluster.awaitExported(partitionId, 150);
        assertExportedInOrderWithoutGaps(partitionId, 150);
        final Map<Long, TestCluster.ExportedLine> exported = cluster.exportedByPosition(partitionId);
        assertThat(exported.get(1L).key()).isEqualTo("before-0");
        assertThat(exported.get(1L).payload()).isEqualTo("{\"n\":0,\"p\":\"before\"}");
        assertThat(exported.get(150L).key()).isEqualTo("kill-49");
    }

    @Test
    @Timeout(180)
    void restartFromDiskContinuesPositionsAndExportsFromAcknowledgedPosition() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 2, 3);
        cluster.awaitLeader(1);
        cluster.appendRecords(1, 40, 8, "first");
        cluster.appendRecords(2, 10, 5, "first");
        cluster.awaitExported(1, 40);
        cluster.awaitExported(2, 10);
        // The acknowledged positions replicated to every replica, so a restart resumes from them.
        for (int b = 0; b < 3; b++)
        {
            final Broker broker = cluster.brokers[b];
            org.awaitility.Awaitility.await("broker " + b + " holds the acknowledged positions")
                .atMost(java.time.Duration.ofSeconds(30)).until(() ->
                    broker.partition(1).state().exportedPosition() == 40 &&
                    broker.partition(2).state().exportedPosition() == 10);
        }

        cluster.stopAll();
        final int linesBefore = cluster.exported(1).size();
        for (int i = 0; i < 3; i++)
        {
            cluster.startBroker(i);
        }
        cluster.awaitLeader(1);
        final List<Long> next = cluster.appendRecords(1, 10, 5, "second");
        assertThat(next.get(0)).isEqualTo(41L);
        cluster.awaitExported(1, 50);
        assertExportedInOrderWithoutGaps(1, 50);
        // Exporters resumed from the acknowledged position: at most the unacknowledged tail is exported again.
        assertThat(cluster.exported(1).size()).isLessThan(linesBefore + 10 + 40);
        final TopologyResponseDecoder topology = cluster.topology(0);
        assertThat(topology.brokerId()).isEqualTo(0);
    }

    @Test
    @Timeout(180)
    void fourBrokersWithReplicationFactorThreeHostOnlyTheirPartitions() throws Exception
    {
        cluster = TestCluster.start(dataDir, 4, 4, 3);
        for (int p = 1; p <= 4; p++)
        {
            cluster.awaitLeader(p);
            cluster.appendRecords(p, 5, 5, "p" + p);
        }
        for (int b = 0; b < 4; b++)
        {
            final Broker broker = cluster.brokers[b];
            org.awaitility.Awaitility.await("broker " + b + " applied every record")
                .atMost(java.time.Duration.ofSeconds(30))
                .until(() -> broker.partitions().values().stream()
                    .allMatch((partition) -> partition.state().lastPosition() == 5));
            final TopologyResponseDecoder topology = cluster.topology(b);
            final List<Integer> hosted = new ArrayList<>();
            for (final TopologyResponseDecoder.PartitionsDecoder partition : topology.partitions())
            {
                hosted.add(partition.partitionId());
                assertThat(partition.leaderId()).isBetween(0, 3);
                assertThat(partition.lastPosition()).isEqualTo(5L);
                final List<String> exporterIds = new ArrayList<>();
                for (final TopologyResponseDecoder.PartitionsDecoder.ExportersDecoder exporter : partition.exporters())
                {
                    assertThat(exporter.position()).isBetween(0L, 5L);
                    exporterIds.add(exporter.exporterId());
                }
                assertThat(exporterIds).containsExactly("file");
            }
            assertThat(hosted).isEqualTo(cluster.distribution.partitionsOf(b));
            assertThat(hosted).hasSize(3);
        }
        for (int p = 1; p <= 4; p++)
        {
            cluster.awaitExported(p, 5);
            assertExportedInOrderWithoutGaps(p, 5);
        }
    }

    private void assertExportedInOrderWithoutGaps(final int partitionId, final long lastPosition) throws Exception
    {
        final List<TestCluster.ExportedLine> lines = cluster.exported(partitionId);
        long highest = 0;
        for (final TestCluster.ExportedLine line : lines)
        {
            assertThat(line.partitionId()).isEqualTo(partitionId);
            // At least once: a line may repeat an earlier position, but never skip ahead of highest + 1.
            assertThat(line.position()).as("no gap after %d", highest).isLessThanOrEqualTo(highest + 1);
            highest = Math.max(highest, line.position());
        }
        assertThat(highest).isEqualTo(lastPosition);
        assertThat(cluster.exportedByPosition(partitionId)).hasSize((int)lastPosition);
    }
}
