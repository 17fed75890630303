package io.sluice.qa.exporter;

import io.sluice.exporter.kafka.KafkaBroker;
import io.sluice.exporter.opensearch.testing.OpenSearchNode;
import io.sluice.exporter.spi.ExporterJars;
import io.sluice.qa.QaClassOrder;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportFiles;
import io.sluice.qa.cluster.ExportedRecord;
import io.sluice.qa.cluster.GatewayClient;
import io.sluice.qa.cluster.PortAllocator;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.RecordToWrite;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.SluiceProcess;
import io.sluice.qa.cluster.WrittenRecord;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.ResourceLock;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 25: every exporter kind configured through environment variables only, as {@code dist/kubernetes/configmap.yaml}
 * configures a pod: a standalone {@code sluice.jar} with no argument at all exports into a file, a real OpenSearch
 * node, a real Kafka (with the broker's {@code retry.max-backoff} among its variables, once refused as an unknown
 * Kafka setting) and a third-party exporter's jar. And a {@code SLUICE_*} variable with a typo stops the start with one
 * line naming it.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@ResourceLock(QaClassOrder.EMBEDDED_SINKS)
class ExportersConfiguredByEnvironmentIT
{
    private static final String INDEX = "env-records";
    private static final String TOPIC = "env-records";
    private static final int RECORDS = 30;
    private static final Duration EXPORT_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(120));

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    @Test
    void aStandaloneConfiguredOnlyByEnvironmentVariablesExportsThroughEveryKind() throws Exception
    {
        final Path dataDir = RUN.directory().resolve("data");
        final Path auditOut = RUN.directory().resolve("audit");
        final Path jar = ExporterJars.buildAuditExporter(RUN.directory().resolve("jars"));
        try (OpenSearchNode search = OpenSearchNode.start(RUN.directory().resolve("opensearch"));
             KafkaBroker kafka = KafkaBroker.start(2))
        {
            kafka.createTopic(TOPIC, 2);
            final int clientPort = PortAllocator.freePort();
            final int managementPort = PortAllocator.freePort();
            final Map<String, String> environment = new HashMap<>(Map.of(
                "SERVER_PORT", Integer.toString(clientPort),
                "MANAGEMENT_SERVER_PORT", Integer.toString(managementPort),
                "SLUICE_CLUSTER_BROKERS", PortAllocator.loopbackBrokerList(1),
                "SLUICE_CLUSTER_PARTITIONS", "2",
                "SLUICE_CLUSTER_REPLICATIONFACTOR", "1",
                "SLUICE_DATADIR", dataDir.toString(),
                "SLUICE_EXPORTERS_FILE_TYPE", "file"));
            // The spellings a configmap gives: no dashes (BULK_MAXDELAY), or underscores for them (BULK_MAX_RECORDS).
            environment.putAll(Map.of(
                "SLUICE_EXPORTERS_SEARCH_TYPE", "opensearch",
                "SLUICE_EXPORTERS_SEARCH_URL", search.url(),
                "SLUICE_EXPORTERS_SEARCH_INDEX", INDEX,
                "SLUICE_EXPORTERS_SEARCH_BULK_MAXDELAY", "100ms",
                "SLUICE_EXPORTERS_SEARCH_BULK_MAX_RECORDS", "10",
                "SLUICE_EXPORTERS_SEARCH_ONREJECTED", "retry"));
            environment.putAll(Map.of(
                "SLUICE_EXPORTERS_BUS_TYPE", "kafka",
                "SLUICE_EXPORTERS_BUS_BOOTSTRAPSERVERS", kafka.bootstrapServers(),
                "SLUICE_EXPORTERS_BUS_TOPIC", TOPIC,
                "SLUICE_EXPORTERS_BUS_RETRY_MAXBACKOFF", "5s",
                "SLUICE_EXPORTERS_BUS_PRODUCER_LINGER_MS", "2"));
            environment.putAll(Map.of(
                "SLUICE_EXPORTERS_AUDIT_CLASSNAME", ExporterJars.AUDIT_EXPORTER,
                "SLUICE_EXPORTERS_AUDIT_JAR", jar.toString(),
                "SLUICE_EXPORTERS_AUDIT_ARGS_OUT", auditOut.toString()));

            final SluiceProcess standalone = RUN.process("standalone", null, List.of(), environment,
                RUN.directory().resolve("work"), "-Xmx768m");
            standalone.start();
            final GatewayClient client = new GatewayClient(URI.create("http://127.0.0.1:" + clientPort),
                URI.create("http://127.0.0.1:" + managementPort), null, Duration.ofSeconds(30));
            Await.until("standalone ready", SluiceCluster.STARTUP_TIMEOUT, () ->
            {
                assertThat(standalone.isAlive()).as("standalone running; log:%n%s", standalone.logTail(40)).isTrue();
                return client.isReady();
            });

            final List<RecordToWrite> batch = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++)
            {
                batch.add(new RecordToWrite("env-" + i, "{\"n\":" + i + "}"));
            }
            final List<WrittenRecord> written = client.writeBatch(batch);
            assertThat(written).hasSize(RECORDS);

            awaitInFiles("file exporter", new ExportFiles(dataDir.resolve("exports").resolve("file")), written);
            awaitInFiles("third-party exporter", new ExportFiles(auditOut), written);
            Await.until("every record a document of index " + INDEX, EXPORT_TIMEOUT, () -> written.stream()
                .allMatch(record -> search.request("GET", "/" + INDEX + "/_doc/" + record.partitionId() + "-" +
                    record.position(), null).statusCode() == 200));
            Await.until("every record in topic " + TOPIC, EXPORT_TIMEOUT,
                () -> identities(kafka.readAll(TOPIC)).containsAll(identities(written)));
            assertThat(standalone.isAlive()).isTrue();
            standalone.kill();
        }
    }

    @Test
    void aSluiceVariableWithATypoStopsTheStartWithOneLineNamingIt()
    {
        final Map<String, String> environment = Map.of(
            "SLUICE_CLUSTER_BROKERS", PortAllocator.loopbackBrokerList(1),
            "SLUICE_CLUSTER_REPLICATIONFACTOR", "1",
            "SLUICE_BROKER_NODEID", "0",
            "SLUICE_DATADIR", RUN.directory().resolve("typo-data").toString(),
            "SLUICE_BROKER_DISK_FREESPACERESERV", "1GB");
        final SluiceProcess broker = RUN.process("typo", "broker", List.of(), environment, RUN.directory().resolve("typo"));
        broker.start();
        assertThat(broker.awaitExit(SluiceCluster.scaled(Duration.ofSeconds(60)))).as(broker.logTail(20)).isTrue();
        assertThat(broker.exitCode()).as(broker.logTail(20)).hasValueSatisfying(code -> assertThat(code).isNotZero());
        final List<String> lines = broker.log().lines().filter(line -> !line.startsWith("=====")).toList();
        assertThat(lines.stream().filter(line -> line.startsWith("sluice:"))).as(broker.log()).containsExactly(
            "sluice: SLUICE_BROKER_DISK_FREESPACERESERV: unknown setting " +
                "(did you mean sluice.broker.disk.free-space-reserve?)");
        assertThat(lines).as("no stack trace, no log of a start").noneMatch(line -> line.startsWith("\tat ") ||
            line.contains("Exception") || line.contains(" INFO "));
        assertThat(RUN.directory().resolve("typo-data")).as("nothing written").doesNotExist();
    }

    private static void awaitInFiles(final String what, final ExportFiles files, final List<WrittenRecord> written)
    {
        Await.until("every record in the " + what + "'s files under " + files.directory(), EXPORT_TIMEOUT, () ->
        {
            final Set<String> exported = new HashSet<>();
            for (final int partitionId : List.of(1, 2))
            {
                for (final ExportedRecord record : files.records(partitionId))
                {
                    exported.add(record.partitionId() + "-" + record.position());
                }
            }
            return exported.containsAll(identities(written));
        });
    }

    private static Set<String> identities(final List<?> records)
    {
        final Set<String> identities = new HashSet<>();
        for (final Object record : records)
        {
            if (record instanceof WrittenRecord written)
            {
                identities.add(written.partitionId() + "-" + written.position());
            }
            else if (record instanceof ConsumerRecord<?, ?> consumed)
            {
                identities.add(header(consumed, "sluice-partition-id") + "-" + header(consumed, "sluice-position"));
            }
        }
        return identities;
    }

    private static String header(final ConsumerRecord<?, ?> record, final String name)
    {
        return new String(record.headers().lastHeader(name).value(), StandardCharsets.US_ASCII);
    }
}
