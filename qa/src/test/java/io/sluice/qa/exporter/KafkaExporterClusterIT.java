package io.sluice.qa.exporter;

import io.sluice.exporter.kafka.KafkaBroker;
import io.sluice.exporter.kafka.KafkaExporter;
import io.sluice.exporter.spi.ExporterJars;
import io.sluice.qa.LongRunning;
import io.sluice.qa.QaClassOrder;
import io.sluice.qa.Records;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportingControlAnswer;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.PairState;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.RecordToWrite;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.ResourceLock;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 13: the Kafka exporter and a third-party exporter on a cluster of separate JVMs (3 brokers, 6 partitions,
 * RF 3), exporting into a real Kafka (KRaft, in this JVM) and, through the SPI, into the audit exporter's files.
 * One cluster for the class, the tests in order; each checks the records it wrote, and the last one checks that the
 * third-party exporter received every record of the run.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ResourceLock(QaClassOrder.EMBEDDED_SINKS)
@LongRunning(seconds = 60)
class KafkaExporterClusterIT
{
    private static final String TOPIC = "sluice-records";
    private static final int KEYS = 100;
    private static final Duration EXPORT_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(120));

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    private static KafkaBroker kafka;
    private static SluiceCluster cluster;
    private static Path auditOut;
    /** Every record acknowledged in this run, for the third-party exporter's check. */
    private static final List<WrittenRecord> ALL_WRITTEN = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startKafkaAndCluster() throws Exception
    {
        kafka = KafkaBroker.start(3);
        kafka.createTopic(TOPIC, 3);
        final Path jar = ExporterJars.buildAuditExporter(RUN.directory().resolve("jars"));
        auditOut = RUN.directory().resolve("audit");
        cluster = RUN.cluster("cluster", builder -> builder
            .requestTimeout(Duration.ofSeconds(3))
            .brokerProperty("sluice.exporters.kafka.type", "kafka")
            .brokerProperty("sluice.exporters.kafka.bootstrap-servers", kafka.bootstrapServers())
            .brokerProperty("sluice.exporters.kafka.topic", TOPIC)
            .brokerProperty("sluice.exporters.kafka.producer.linger.ms", "2")
            .brokerProperty("sluice.exporters.audit.class-name", ExporterJars.AUDIT_EXPORTER)
            .brokerProperty("sluice.exporters.audit.jar", jar.toString())
            .brokerProperty("sluice.exporters.audit.args.out", auditOut.toString())
            .brokerProperty("sluice.exporters.audit.args.greeting", "hello"));
        cluster.start();
        cluster.awaitReady();
        cluster.awaitPreferredLeaders(); // backfill starts ask each partition's leader
        cluster.awaitLeaders();
    }

    @AfterAll
    static void stopKafka() throws Exception
    {
        if (kafka != null)
        {
            kafka.close();
        }
    }

    @Test
    @Order(1)
    void tenThousandRecordsAreAllInTheTopicEachKeyInOrder()
    {
        final List<WrittenRecord> written = write("bulk", 10_000);

        awaitInTopic(written);
        assertEachKeyInOrder(kafka.readAll(TOPIC));
    }

    @Test
    @Order(2)
    void nothingIsMissingAfterKafkaWasDownFor20SecondsWhileRecordsWereWritten() throws Exception
    {
        final CompletableFuture<List<WrittenRecord>> writing = CompletableFuture.supplyAsync(() -> write("outage", 4_000));
        Await.until("writing under way", Records.WRITE_TIMEOUT, () -> ALL_WRITTEN.size() >= 10_500 || writing.isDone());
        kafka.stopBroker();
        final long stoppedAtNs = System.nanoTime();
        try
        {
            Await.until("an exporter failing on Kafka in a broker's log", SluiceCluster.scaled(Duration.ofSeconds(20)),
                () -> brokerLogsContain("exporter kafka failed at position"));
            Await.quietPeriod("Kafka stays down for 20 s", Duration.ofSeconds(20).minusNanos(System.nanoTime() - stoppedAtNs));
            // The exporters view (RETRYING with the last error) is built in parallel; until it is here, the exported
            // position (the slowest exporter's) shows that nothing was acknowledged that Kafka did not take.
            assertThat(laggingLeaders()).as("leaders whose exported position stays behind while Kafka is down")
                .isPositive();
        }
        finally
        {
            kafka.startBroker();
        }
        final List<WrittenRecord> written = writing.get(5, TimeUnit.MINUTES);

        awaitInTopic(written);
        assertEachKeyInOrder(kafka.readAll(TOPIC));
    }

    @Test
    @Order(3)
    void nothingIsMissingAfterALeaderIsKilledMidStream() throws Exception
    {
        final int before = ALL_WRITTEN.size();
        final CompletableFuture<List<WrittenRecord>> writing = CompletableFuture.supplyAsync(() -> write("kill", 4_000));
        Await.until("writing under way", Records.WRITE_TIMEOUT,
            () -> ALL_WRITTEN.size() >= before + 1_500 || writing.isDone());
        final int victim = cluster.awaitLeaders().leaderOf(1).orElseThrow();
        cluster.killBroker(victim);
        Await.quietPeriod("broker " + victim + " stays dead while the writer goes on", Duration.ofSeconds(3));
        cluster.startBroker(victim);
        final List<WrittenRecord> written = writing.get(5, TimeUnit.MINUTES);
        assertThat(ALL_WRITTEN.size() - before).as("acknowledged across the kill of broker %d", victim).isEqualTo(4_000);

        awaitInTopic(written);
        assertEachKeyInOrder(kafka.readAll(TOPIC));
        cluster.awaitBrokerAvailable(victim);
    }

    @Test
    @Order(4)
    void afterA200ForAPauseTheTopicGainsNothingAndResumeBringsEverything()
    {
        cluster.awaitLeaders();
        final ExportingControlAnswer pause = cluster.client().pause();
        assertThat(pause.status()).as(pause.toString()).isEqualTo(200);
        final long inTopicAtPause = kafka.recordCount(TOPIC);
        final long auditedAtPause = auditLines();

        final List<WrittenRecord> written = write("paused", 1_000);
        Await.quietPeriod("paused: nothing may reach the topic or the audit exporter", Duration.ofSeconds(5));
        assertThat(kafka.recordCount(TOPIC)).as("records in the topic while paused").isEqualTo(inTopicAtPause);
        assertThat(auditLines()).as("lines of the third-party exporter while paused").isEqualTo(auditedAtPause);

        final ExportingControlAnswer resume = cluster.client().resume();
        assertThat(resume.status()).as(resume.toString()).isEqualTo(200);
        awaitInTopic(written);
    }

    @Test
    @Order(5)
    void aBackfillExportsTheSkippedRangeThroughTheKafkaExporter()
    {
        cluster.awaitLeaders();
        final ExportingControlAnswer pause = cluster.client().pause();
        assertThat(pause.status()).as(pause.toString()).isEqualTo(200);
        final List<WrittenRecord> skipped = write("skipped", 1_000);

        // The kafka exporter jumps to the latest positions: only the backfill tasks (each a kafka exporter of its
        // own, opened by the same kind) can bring the skipped records into the topic.
        final HttpAnswer reset = cluster.client().management("POST",
            "/actuator/exporters/kafka/resetToLatestAndBackfill", null); // one task a partition: order kept
        assertThat(reset.status()).as(reset.toString()).isEqualTo(202);
        final String backfillId = reset.json().path("backfillId").asString("");
        final ExportingControlAnswer resume = cluster.client().resume();
        assertThat(resume.status()).as(resume.toString()).isEqualTo(200);

        Await.until("backfill " + backfillId + " SUCCEEDED", EXPORT_TIMEOUT, () ->
        {
            final HttpAnswer view = cluster.client().management("GET", "/actuator/backfills/" + backfillId, null);
            final String state = view.status() == 200 ? view.json().path("state").asString("") : "";
            if (state.equals("FAILED") || state.equals("CANCELLED"))
            {
                throw new AssertionError("backfill " + backfillId + " ended " + view.body());
            }
            return state.equals("SUCCEEDED");
        });
        awaitInTopic(skipped);
        assertEachKeyInOrder(kafka.readAll(TOPIC));
    }

    @Test
    @Order(6)
    void theThirdPartyExporterReceivesEveryRecordAndSeesNoBrokerClass() throws IOException
    {
        final List<WrittenRecord> written = List.copyOf(ALL_WRITTEN);
        assertThat(written).hasSizeGreaterThanOrEqualTo(20_000);
        Await.until("every record of the run in the audit exporter's files", EXPORT_TIMEOUT,
            () -> missing(written, auditPositions()).isEmpty());

        final List<Path> probes;
        try (Stream<Path> files = Files.list(auditOut))
        {
            probes = files.filter(file -> file.getFileName().toString().startsWith("probe-")).toList();
        }
        assertThat(probes).isNotEmpty();
        for (final Path probe : probes)
        {
            assertThat(Files.readAllLines(probe)).as(probe.toString()).contains(
                "io.sluice.exporter.spi.RecordJson=visible visible",
                "org.agrona.DirectBuffer=visible visible",
                "io.sluice.broker.Broker=hidden hidden",
                "io.sluice.broker.exporter.FileExporter=hidden hidden",
                "org.slf4j.LoggerFactory=hidden hidden",
                "org.apache.kafka.clients.producer.KafkaProducer=hidden hidden",
                "args={greeting=hello, out=" + auditOut + "}");
        }
    }

    // ---------------------------------------------------------------- helpers

    /** Writes {@code count} records over {@value #KEYS} keys (several records a key), remembering what was acknowledged. */
    private static List<WrittenRecord> write(final String prefix, final int count)
    {
        final List<WrittenRecord> written = new ArrayList<>(count);
        for (int from = 0; from < count; from += 500)
        {
            final int base = from;
            final List<WrittenRecord> chunk = Records.writeInBatches(cluster, Math.min(500, count - from), 50,
                i -> new RecordToWrite(prefix + "-key-" + (base + i) % KEYS,
                    "{\"prefix\":\"" + prefix + "\",\"seq\":" + (base + i) + "}"));
            written.addAll(chunk);
            ALL_WRITTEN.addAll(chunk);
        }
        return written;
    }

    private static void awaitInTopic(final List<WrittenRecord> written)
    {
        final long startNs = System.nanoTime();
        Await.until(written.size() + " records in the topic", EXPORT_TIMEOUT,
            () -> missing(written, topicPositions()).isEmpty());
        cluster.log(written.size() + " records in the topic after " +
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs) + " ms");
    }

    /** Every (partition id, position) the topic holds, from the headers. */
    private static Set<Long> topicPositions()
    {
        final Set<Long> positions = new HashSet<>();
        for (final ConsumerRecord<byte[], byte[]> record : kafka.readAll(TOPIC))
        {
            positions.add(id(Integer.parseInt(header(record, KafkaExporter.PARTITION_HEADER)),
                Long.parseLong(header(record, KafkaExporter.POSITION_HEADER))));
        }
        return positions;
    }

    /**
     * Per key (one key lives on one Sluice partition), the first copy of each position comes after the first copy of
     * every smaller one: at-least-once may repeat a run of records, never reorder them. Also checks each value is
     * the record's JSON line with the key and position of its headers.
     */
    private static void assertEachKeyInOrder(final List<ConsumerRecord<byte[], byte[]>> records)
    {
        final Set<Long> seen = new HashSet<>();
        final Map<String, Long> lastPerKey = new HashMap<>();
        int duplicates = 0;
        for (final ConsumerRecord<byte[], byte[]> record : records)
        {
            final int partitionId = Integer.parseInt(header(record, KafkaExporter.PARTITION_HEADER));
            final long position = Long.parseLong(header(record, KafkaExporter.POSITION_HEADER));
            final String key = new String(record.key(), StandardCharsets.UTF_8);
            final String value = new String(record.value(), StandardCharsets.UTF_8);
            assertThat(value).startsWith("{\"partitionId\":" + partitionId + ",\"position\":" + position +
                ",\"key\":\"" + key + "\"");
            if (!seen.add(id(partitionId, position)))
            {
                duplicates++;
                continue;
            }
            final Long previous = lastPerKey.put(key, position);
            assertThat(previous == null || previous < position)
                .as("key %s: position %d first seen after %d", key, position, previous).isTrue();
        }
        cluster.log(records.size() + " Kafka records, " + duplicates + " duplicates, " + lastPerKey.size() + " keys in order");
    }

    private static List<WrittenRecord> missing(final List<WrittenRecord> written, final Set<Long> present)
    {
        return written.stream().filter(record -> !present.contains(id(record.partitionId(), record.position()))).toList();
    }

    private static Set<Long> auditPositions()
    {
        final Set<Long> positions = new HashSet<>();
        forEachAuditLine(line ->
        {
            final int partitionId = Integer.parseInt(between(line, "{\"partitionId\":", ","));
            final long position = Long.parseLong(between(line, ",\"position\":", ","));
            positions.add(id(partitionId, position));
        });
        return positions;
    }

    private static long auditLines()
    {
        final long[] count = {0};
        forEachAuditLine(line -> count[0]++);
        return count[0];
    }

    private static void forEachAuditLine(final java.util.function.Consumer<String> action)
    {
        if (!Files.isDirectory(auditOut))
        {
            return;
        }
        try (Stream<Path> files = Files.list(auditOut))
        {
            for (final Path file : files.filter(f -> f.getFileName().toString().endsWith(".jsonl")).toList())
            {
                for (final String line : Files.readAllLines(file))
                {
                    if (line.endsWith("}"))
                    {
                        action.accept(line); // a line still being written has no closing brace yet
                    }
                }
            }
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    /** Leaders whose exported position (the slowest exporter's) is behind their last position. */
    private static long laggingLeaders()
    {
        return cluster.client().exporting().targets().stream()
            .filter(PairState::isLeader)
            .filter(pair -> pair.exportedPosition() >= 0 && pair.exportedPosition() < pair.lastPosition())
            .count();
    }

    private static boolean brokerLogsContain(final String text)
    {
        try (Stream<Path> logs = Files.list(cluster.runDirectory().resolve("logs")))
        {
            for (final Path log : logs.filter(file -> file.getFileName().toString().startsWith("broker-")).toList())
            {
                if (Files.readString(log).contains(text))
                {
                    return true;
                }
            }
            return false;
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    private static long id(final int partitionId, final long position)
    {
        return ((long)partitionId << 48) | position;
    }

    private static String header(final ConsumerRecord<byte[], byte[]> record, final String name)
    {
        return new String(record.headers().lastHeader(name).value(), StandardCharsets.US_ASCII);
    }

    private static String between(final String text, final String start, final String end)
    {
        final int from = text.indexOf(start) + start.length();
        return text.substring(from, text.indexOf(end, from));
    }
}
