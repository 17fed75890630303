package io.sluice.broker;

import io.sluice.protocol.codecs.TopologyResponseDecoder;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The standalone layout (3 brokers, 6 partitions, RF 3 in one JVM): every partition works, threads stay bounded. */
class StandaloneLayoutIT
{
    @TempDir
    Path dataDir;

    @AutoClose
    private TestCluster cluster;

    @Test
    @Timeout(120)
    void threeBrokersInOneJvmServeSixPartitionsWithBoundedThreads() throws Exception
    {
        final int threadsBefore = Thread.activeCount();
        cluster = TestCluster.start(dataDir, 3, 6, 3);
        final Set<Integer> leaders = new HashSet<>();
        for (int p = 1; p <= 6; p++)
        {
            leaders.add(cluster.awaitLeader(p));
            cluster.appendRecords(p, 3, 3, "p" + p);
        }
        for (int p = 1; p <= 6; p++)
        {
            cluster.awaitExported(p, 3);
        }
        for (int b = 0; b < 3; b++)
        {
            int partitions = 0;
            for (final TopologyResponseDecoder.PartitionsDecoder partition : cluster.topology(b).partitions())
            {
                partitions++;
                for (final TopologyResponseDecoder.PartitionsDecoder.ExportersDecoder exporter : partition.exporters())
                {
                    exporter.position();
                    exporter.exporterId();
                }
            }
            assertThat(partitions).isEqualTo(6);
        }
        final int threads = Thread.activeCount() - threadsBefore;
        System.out.println("standalone layout: " + threads + " threads for 3 brokers x 6 partitions, leaders on " + leaders);
        Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
            .map((n) -> n.replaceAll("[0-9]+", "N")).sorted()
            .collect(java.util.stream.Collectors.groupingBy((n) -> n, java.util.TreeMap::new,
                java.util.stream.Collectors.counting()))
            .forEach((name, count) -> System.out.println("  " + count + " x " + name));
        assertThat(threads).isLessThan(400);
    }
}
