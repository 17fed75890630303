package io.sluice.qa.opensearch;

import io.sluice.exporter.opensearch.testing.OpenSearchNode;
import io.sluice.qa.QaClassOrder;
import io.sluice.qa.Records;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.Json;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.RecordToWrite;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.ResourceLock;
import tools.jackson.databind.JsonNode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 12: a record whose payload conflicts with the index's mapping (a 400 for that document). One cluster runs
 * two OpenSearch exporters over the same records: {@code strict} (on-rejected=retry, the default) retries it and
 * holds its position back; {@code lenient} (on-rejected=dead-letter) writes it to its dead-letter file and goes on.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@ResourceLock(QaClassOrder.EMBEDDED_SINKS)
class RejectedDocumentIT
{
    private static final Duration EXPORT_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(90));

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    private OpenSearchNode node;
    private SluiceCluster cluster;
    private final List<WrittenRecord> good = new ArrayList<>();
    private WrittenRecord conflicting;

    @BeforeAll
    void start() throws Exception
    {
        node = OpenSearchNode.start(RUN.directory().resolve("opensearch"));
        cluster = RUN.cluster("cluster", builder ->
        {
            builder.brokers(1).partitions(2).replicationFactor(1).requestTimeout(Duration.ofSeconds(4))
                .gatewayProperty("sluice.gateway.metrics.exporter-poll-interval", "500ms");
            for (final String id : List.of("strict", "lenient"))
            {
                builder.property("sluice.exporters." + id + ".type", "opensearch")
                    .property("sluice.exporters." + id + ".url", node.url())
                    .property("sluice.exporters." + id + ".index", "qa-" + id)
                    .property("sluice.exporters." + id + ".bulk.max-delay", "100ms")
                    .property("sluice.exporters." + id + ".retry.max-backoff", "1s");
            }
            builder.property("sluice.exporters.lenient.on-rejected", "dead-letter");
        });
        cluster.start();
        cluster.awaitReady();
        cluster.awaitLeaders();

        final List<WrittenRecord> first = Records.writeInBatches(cluster, 40, 20,
            i -> new RecordToWrite("k-" + i, "{\"amount\":" + i + "}"));
        good.addAll(first);
        // amount is a number in both indexes now, so an object there is refused for good
        new SearchIndex(node, "qa-strict").awaitDocuments(first, EXPORT_TIMEOUT);
        new SearchIndex(node, "qa-lenient").awaitDocuments(first, EXPORT_TIMEOUT);
        conflicting = cluster.client().write("k-7", "{\"amount\":{\"nested\":true}}");
        good.addAll(Records.writeInBatches(cluster, 40, 20,
            i -> new RecordToWrite("k-" + i, "{\"amount\":" + (100 + i) + "}")));
        cluster.log("conflicting record: " + conflicting);
    }

    @AfterAll
    void stop() throws Exception
    {
        if (node != null)
        {
            node.close();
        }
    }

    @Test
    void byDefaultTheConflictingDocumentIsRetriedAndItsPositionIsNotAcknowledged()
    {
        final JsonNode partition = Await.value("strict RETRYING on partition " + conflicting.partitionId(),
            EXPORT_TIMEOUT, () -> partitionOf("strict", conflicting.partitionId())
                .filter(p -> "RETRYING".equals(p.path("state").asString())));
        assertThat(partition.path("lastError").asString()).contains("mapper_parsing_exception")
            .contains(conflicting.partitionId() + "-" + conflicting.position());

        final long failuresBefore = gauge("sluice_exporter_retries", "strict", conflicting.partitionId());
        Await.quietPeriod("the strict exporter keeps retrying the rejected document", Duration.ofSeconds(4));
        final JsonNode later = partitionOf("strict", conflicting.partitionId()).orElseThrow();
        assertThat(later.path("state").asString()).isEqualTo("RETRYING");
        assertThat(later.path("position").asLong()).as("acknowledged position of %s", later)
            .isLessThan(conflicting.position());
        assertThat(gauge("sluice_exporter_retries", "strict", conflicting.partitionId()))
            .as("retries keep counting").isGreaterThan(failuresBefore);
        final SearchIndex strict = new SearchIndex(node, "qa-strict");
        assertThat(strict.documents()).extracting(SearchIndex.Document::id)
            .doesNotContain(conflicting.partitionId() + "-" + conflicting.position());
    }

    @Test
    void withDeadLetterTheConflictingRecordLandsInTheDeadLetterFileAndTheRestFlows() throws Exception
    {
        final SearchIndex lenient = new SearchIndex(node, "qa-lenient");
        lenient.awaitDocuments(good, EXPORT_TIMEOUT);
        final Path deadLetters = cluster.dataDirectory().resolve("exports/lenient/dead-letter/partition-" +
            conflicting.partitionId() + ".jsonl");
        Await.until(deadLetters + " written", EXPORT_TIMEOUT, () -> Files.exists(deadLetters));
        final List<String> lines = Files.readAllLines(deadLetters);
        assertThat(lines).hasSize(1);
        final JsonNode line = Json.parse(lines.get(0));
        assertThat(line.path("record").path("position").asLong()).isEqualTo(conflicting.position());
        assertThat(line.path("record").path("partitionId").asInt()).isEqualTo(conflicting.partitionId());
        assertThat(line.path("record").path("key").asString()).isEqualTo("k-7");
        assertThat(line.path("record").path("payload")).isEqualTo(Json.parse(conflicting.payloadJson()));
        assertThat(line.path("reason").asString()).contains("mapper_parsing_exception");

        assertThat(lenient.documents()).extracting(SearchIndex.Document::id)
            .doesNotContain(conflicting.partitionId() + "-" + conflicting.position());
        final long last = Records.highestPositions(good).get(conflicting.partitionId());
        Await.until("lenient acknowledged past the conflicting record", EXPORT_TIMEOUT, () ->
            partitionOf("lenient", conflicting.partitionId())
                .map(p -> "EXPORTING".equals(p.path("state").asString()) && p.path("position").asLong() >= last)
                .orElse(false));
        Await.until("the dead letter counted in the metrics", EXPORT_TIMEOUT, () ->
            gauge("sluice_exporter_dead_letters", "lenient", conflicting.partitionId()) == 1);
    }

    private Optional<JsonNode> partitionOf(final String exporterId, final int partitionId)
    {
        final HttpAnswer view = cluster.client().management("GET", "/actuator/exporters", null);
        if (view.status() != 200)
        {
            throw new IllegalStateException("GET /actuator/exporters: " + view);
        }
        for (final JsonNode exporter : view.json().path("exporters"))
        {
            if (exporterId.equals(exporter.path("id").asString()))
            {
                for (final JsonNode partition : exporter.path("partitions"))
                {
                    if (partition.path("partitionId").asInt() == partitionId)
                    {
                        return Optional.of(partition);
                    }
                }
            }
        }
        return Optional.empty();
    }

    /** A per exporter and partition gauge from the gateway's Prometheus page, -1 when absent. */
    private long gauge(final String name, final String exporterId, final int partitionId)
    {
        final HttpAnswer page = cluster.client().management("GET", "/actuator/prometheus", null);
        for (final String line : page.body().split("\n"))
        {
            if (line.startsWith(name + "{") && line.contains("exporter=\"" + exporterId + "\"") &&
                line.contains("partition=\"" + partitionId + "\""))
            {
                return (long)Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return -1;
    }
}
