package io.sluice.broker;

import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.exporter.kafka.KafkaExporter;
import io.sluice.protocol.cluster.ExporterStatus;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A kafka exporter whose Kafka cannot be reached shows as retrying with the error, and acknowledges nothing. */
class KafkaExporterRetryingIT
{
    @TempDir
    Path dataDir;

    @AutoClose
    private TestCluster cluster;

    @Test
    @Timeout(120)
    void unreachableKafkaShowsTheExporterRetryingWithTheErrorAndAcknowledgesNothing() throws Exception
    {
        final int refusingPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            refusingPort = socket.getLocalPort(); // closed again below: connections are refused
        }
        // Each failed attempt waits out the producer's metadata wait (3 s by default): half a second here, so the two
        // failures the test waits for come quickly; the error is the same TimeoutException.
        cluster = TestCluster.start(dataDir, 1, 1, 1, (c) -> c.withExporters(Map.of("events",
            new ExporterConfig("events", KafkaExporter.TYPE, Map.of("bootstrap-servers", "127.0.0.1:" + refusingPort,
                "producer.max.block.ms", "500")))));
        final int leader = cluster.awaitLeader(1);
        cluster.appendRecords(1, 10, 5, "r");

        await("the exporter shown as retrying").atMost(Duration.ofSeconds(60)).until(() ->
            status(leader).retrying() && status(leader).failures() >= 2);
        final ExporterStatus status = status(leader);
        assertThat(status.type()).isEqualTo("kafka");
        // The first records may have been handed over alone (the director flushes whenever it runs out of records).
        assertThat(status.lastError()).startsWith("kafka 127.0.0.1:" + refusingPort + " topic sluice-records: ")
            .containsPattern("\\d+ of \\d+ records not acknowledged from position 1: TimeoutException: ");
        assertThat(status.acknowledgedPosition()).isZero();
        assertThat(cluster.brokers[leader].partition(1).state().exporterPosition("events")).isZero();
    }

    private ExporterStatus status(final int leader)
    {
        return cluster.brokers[leader].partition(1).director().exporterStatuses().stream()
            .filter(s -> s.exporterId().equals("events")).findFirst().orElseThrow();
    }
}
