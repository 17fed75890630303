package io.sluice.broker;

import io.sluice.testing.QuietPeriod;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.FileExporter;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A failing exporter is retried with backoff and never skips a record. */
class BrokerExporterRetryIT
{
    @TempDir
    Path dataDir;

    @AutoClose
    private TestCluster cluster;

    @Test
    @Timeout(120)
    void failingExporterIsRetriedUntilItWorksAndSkipsNothing() throws Exception
    {
        // The sink path is blocked by a plain file, so every export fails until the file goes away.
        final Path blocker = dataDir.resolve("blocked");
        Files.writeString(blocker, "not a directory");
        final Path sink = blocker.resolve("sink");
        cluster = TestCluster.start(dataDir, 3, 1, 3, (c) -> c.withExporters(Map.of("sink",
            new ExporterConfig("sink", FileExporter.TYPE, Map.of(FileExporter.PATH_PROPERTY, sink.toString())))));
        final int leader = cluster.awaitLeader(1);
        cluster.appendRecords(1, 30, 5, "r");
        QuietPeriod.of(Duration.ofSeconds(1), "nothing acknowledged while the sink fails");
        assertThat(cluster.brokers[leader].partition(1).state().exporterPosition("sink")).isZero();

        Files.delete(blocker);
        final Path file = sink.resolve("partition-1.jsonl");
        await("exported after the sink recovers").atMost(Duration.ofSeconds(30)).until(() ->
            Files.exists(file) && Files.readAllLines(file, StandardCharsets.UTF_8).size() >= 30);
        final List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        for (int i = 0; i < 30; i++)
        {
            assertThat(lines.get(i)).startsWith("{\"partitionId\":1,\"position\":" + (i + 1) + ",\"key\":\"r-" + i + "\"");
        }
        await("acknowledged").atMost(Duration.ofSeconds(30)).until(() ->
            cluster.brokers[leader].partition(1).state().exporterPosition("sink") == 30);
    }
}
