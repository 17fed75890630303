package io.sluice.exporter.opensearch;

import io.sluice.testing.QuietPeriod;
import io.sluice.exporter.opensearch.testing.OpenSearchNode;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterController;
import io.sluice.exporter.spi.SinkSnapshots;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The exporter against a real OpenSearch node in this JVM, driven as the broker's director drives it. */
@Timeout(120)
final class OpenSearchExporterIT
{
    @TempDir
    static Path nodeHome;
    private static OpenSearchNode node;

    @TempDir
    Path dataDir;
    private final AtomicLong acknowledged = new AtomicLong(-1);
    private final AtomicInteger deadLettered = new AtomicInteger();
    private final AtomicInteger writes = new AtomicInteger();
    private final ExporterController controller = new ExporterController()
    {
        @Override
        public void acknowledge(final long position)
        {
            acknowledged.accumulateAndGet(position, Math::max);
        }

        @Override
        public void sinkWriteCompleted(final int records, final long latencyNanos)
        {
            writes.incrementAndGet();
        }

        @Override
        public void deadLettered(final int records)
        {
            deadLettered.addAndGet(records);
        }
    };

    @BeforeAll
    static void startNode() throws Exception
    {
        node = OpenSearchNode.start(nodeHome.resolve("node"));
    }

    @AfterAll
    static void stopNode() throws Exception
    {
        node.close();
    }

    private OpenSearchExporter open(final int partitionId, final Map<String, String> overrides) throws Exception
    {
        final Map<String, String> properties = new HashMap<>();
        properties.put("url", node.url());
        properties.putAll(overrides);
        final OpenSearchExporter exporter = new OpenSearchExporter();
        exporter.configure(new ExporterContext("search", partitionId, 0, dataDir, properties));
        exporter.open(controller);
        return exporter;
    }

    @Test
    void aSecondTakeOfTheSameSnapshotAnswersTheFirstTakesOutcomeInsteadOfARefusal() throws Exception
    {
        // What a backup's gateway does when the broker it asked answers after its deadline: it asks another broker,
        // whose exporter finds the snapshot the first one took.
        final String index = "snapshot-twice";
        final String repository = "twice-repository";
        node.registerFsRepository(repository);
        final OpenSearchExporter exporter = open(1, Map.of("index", index, "bulk.max-records", "1",
            "snapshot.repository", repository));
        exporter.export(TestRecord.of(1, 1, "k", "{\"n\":1}"));
        exporter.flush();
        assertThat(node.count(index)).isEqualTo(1);
        final OpenSearchExporter onAnotherBroker = open(2, Map.of("index", index, "snapshot.repository", repository));

        try (SinkSnapshots first = exporter.snapshots(); SinkSnapshots second = onAnotherBroker.snapshots())
        {
            assertThat(first.check("sluice-backup-7", 10_000).state()).isEqualTo(SinkSnapshots.MISSING);
            assertThat(first.take("sluice-backup-7", 30_000).state()).isEqualTo(SinkSnapshots.SUCCESS);
            final SinkSnapshots.Snapshot again = second.take("sluice-backup-7", 30_000);
            assertThat(again.state()).as("%s", again).isEqualTo(SinkSnapshots.SUCCESS);
            assertThat(second.check("sluice-backup-7", 10_000).state()).isEqualTo(SinkSnapshots.SUCCESS);
        }
        onAnotherBroker.close();
        exporter.close();
    }

    @Test
    void aSnapshotIntoARepositoryNobodyRegisteredIsRefusedNamingIt() throws Exception
    {
        final OpenSearchExporter exporter = open(1, Map.of("index", "no-repository", "snapshot.repository", "never-registered"));
        try (SinkSnapshots snapshots = exporter.snapshots())
        {
            final SinkSnapshots.Snapshot refused = snapshots.take("sluice-backup-8", 10_000);
            assertThat(refused.state()).isEqualTo("REFUSED");
            assertThat(refused.detail()).contains("never-registered");
        }
        exporter.close();
    }

    @Test
    void everyRecordBecomesOneDocumentKeyedByPartitionAndPositionWithTypedFixedFields() throws Exception
    {
        final String index = "every-record";
        final OpenSearchExporter exporter = open(3, Map.of("index", index, "bulk.max-records", "400"));
        for (long position = 1; position <= 1000; position++)
        {
            exporter.export(TestRecord.of(3, position, position % 2 == 0 ? "order-" + position : null,
                "{\"amount\":" + position + ",\"note\":\"caf\\u00e9 \\\"quoted\\\"\"}"));
        }
        // Full bulks were sent when the next record did not fit; the rest waits for its delay.
        assertThat(writes.get()).isEqualTo(2);
        assertThat(acknowledged.get()).isEqualTo(800);
        exporter.close();
        assertThat(node.count(index)).isEqualTo(800);

        final OpenSearchExporter again = open(3, Map.of("index", index, "bulk.max-delay", "1ms"));
        for (long position = 1; position <= 1000; position++)
        {
            again.export(TestRecord.of(3, position, position % 2 == 0 ? "order-" + position : null, "{\"amount\":" + position + "}"));
        }
        QuietPeriod.of(Duration.ofMillis(5), "the bulk's 1 ms maximum delay runs out");
        again.flush();
        again.close();
        assertThat(acknowledged.get()).isEqualTo(1000);
        assertThat(node.count(index)).as("exported again: overwritten, not duplicated").isEqualTo(1000);

        final HttpResponse<String> document = node.request("GET", "/" + index + "/_doc/3-42", null);
        assertThat(document.statusCode()).isEqualTo(200);
        assertThat(document.body()).contains("\"_source\":{\"partitionId\":3,\"position\":42,\"key\":\"order-42\"," +
            "\"timestamp\":1764420000042,\"payload\":{\"amount\":42}}");
        final String mapping = node.request("GET", "/" + index + "/_mapping", null).body();
        assertThat(mapping).contains("\"key\":{\"type\":\"keyword\"}", "\"position\":{\"type\":\"long\"}",
            "\"partitionId\":{\"type\":\"long\"}", "\"timestamp\":{\"type\":\"date\",\"format\":\"epoch_millis\"}");
    }

    @Test
    void anUnreachableSinkThrowsKeepsTheBulkAndTakesNoMoreRecordsThanItsBounds() throws Exception
    {
        final int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            closedPort = socket.getLocalPort();
        }
        final OpenSearchExporter exporter = open(1, Map.of("url", "http://127.0.0.1:" + closedPort,
            "bulk.max-records", "5", "index", "unreachable"));
        for (long position = 1; position <= 5; position++)
        {
            exporter.export(TestRecord.of(1, position, null, "{}"));
        }
        assertThatThrownBy(() -> exporter.export(TestRecord.of(1, 6, null, "{}"))).isInstanceOf(Exception.class);
        assertThatThrownBy(exporter::flush).isInstanceOf(Exception.class);
        assertThat(exporter.buffered()).isEqualTo(5);
        assertThat(acknowledged.get()).isEqualTo(-1);
        exporter.close();
    }

    @Test
    void aDocumentRejectedForGoodIsRetriedByDefaultAndHoldsBackItsPosition() throws Exception
    {
        final String index = "conflict-retry";
        final OpenSearchExporter exporter = open(1, Map.of("index", index, "bulk.max-delay", "1ms"));
        exporter.export(TestRecord.of(1, 1, null, "{\"amount\":1}"));
        exporter.export(TestRecord.of(1, 2, null, "{\"amount\":{\"nested\":true}}"));
        exporter.export(TestRecord.of(1, 3, null, "{\"amount\":3}"));
        QuietPeriod.of(Duration.ofMillis(5), "the bulk's 1 ms maximum delay runs out");
        for (int attempt = 0; attempt < 3; attempt++)
        {
            assertThatThrownBy(exporter::flush).hasMessageContaining("document 1-2: 400 mapper_parsing_exception");
        }
        assertThat(acknowledged.get()).isEqualTo(1);
        assertThat(exporter.buffered()).isEqualTo(1);
        assertThat(node.count(index)).isEqualTo(2);
        exporter.close();
    }

    @Test
    void withDeadLetterARejectedDocumentGoesToTheDeadLetterFileAndTheRestFlows() throws Exception
    {
        final String index = "conflict-dead-letter";
        final OpenSearchExporter exporter = open(2, Map.of("index", index, "bulk.max-delay", "1ms",
            "on-rejected", "dead-letter"));
        exporter.export(TestRecord.of(2, 1, null, "{\"amount\":1}"));
        exporter.export(TestRecord.of(2, 2, "k", "{\"amount\":{\"nested\":true}}"));
        exporter.export(TestRecord.of(2, 3, null, "{\"amount\":3}"));
        QuietPeriod.of(Duration.ofMillis(5), "the bulk's 1 ms maximum delay runs out");
        exporter.flush();
        exporter.close();
        assertThat(acknowledged.get()).isEqualTo(3);
        assertThat(deadLettered.get()).isEqualTo(1);
        assertThat(node.count(index)).isEqualTo(2);
        final List<String> lines = Files.readAllLines(
            dataDir.resolve("exports/search/dead-letter/partition-2.jsonl"));
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0)).startsWith("{\"record\":{\"partitionId\":2,\"position\":2,\"key\":\"k\",")
            .contains("\"payload\":{\"amount\":{\"nested\":true}}},\"reason\":\"400 mapper_parsing_exception");
    }
}
