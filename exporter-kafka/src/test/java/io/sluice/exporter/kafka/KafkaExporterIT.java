package io.sluice.exporter.kafka;

import io.sluice.testing.QuietPeriod;
import io.sluice.exporter.spi.ExporterConfigException;
import io.sluice.exporter.spi.ExporterContext;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Kafka exporter against a real single-node Kafka in this JVM. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class KafkaExporterIT
{
    private static KafkaBroker kafka;

    @BeforeAll
    static void startKafka() throws Exception
    {
        kafka = KafkaBroker.start(3);
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
    void writesEachRecordAsOneKafkaRecordWithItsKeyJsonLineAndPositionHeaders() throws Exception
    {
        final String topic = "records-shape";
        kafka.createTopic(topic, 3); // as operators are told to: no first-send wait for a new topic's leader
        final AtomicLong acknowledged = new AtomicLong();
        final KafkaExporter exporter = exporter(topic, 2, acknowledged, Map.of());

        exporter.export(new TestRecord(2, 7, "order-42", "{\"amount\":7}"));
        exporter.export(new TestRecord(2, 8, null, "{\"amount\":8}"));
        exporter.flush();
        exporter.close();

        assertThat(acknowledged.get()).isEqualTo(8);
        final List<ConsumerRecord<byte[], byte[]>> records = kafka.readAll(topic);
        assertThat(records).hasSize(2);
        final ConsumerRecord<byte[], byte[]> keyed = byPosition(records).get(7L);
        assertThat(new String(keyed.key(), StandardCharsets.UTF_8)).isEqualTo("order-42");
        assertThat(new String(keyed.value(), StandardCharsets.UTF_8)).isEqualTo(
            "{\"partitionId\":2,\"position\":7,\"key\":\"order-42\",\"timestamp\":1764420000007,\"payload\":{\"amount\":7}}");
        assertThat(header(keyed, KafkaExporter.PARTITION_HEADER)).isEqualTo("2");
        final ConsumerRecord<byte[], byte[]> unkeyed = byPosition(records).get(8L);
        assertThat(unkeyed.key()).isNull();
        assertThat(new String(unkeyed.value(), StandardCharsets.UTF_8)).contains("\"key\":null");
    }

    @Test
    void keepsEachKeysOrderAndAcknowledgesOnlyWhatKafkaTook() throws Exception
    {
        final String topic = "records-order";
        kafka.createTopic(topic, 3); // as operators are told to: no first-send wait for a new topic's leader
        final AtomicLong acknowledged = new AtomicLong();
        final KafkaExporter exporter = exporter(topic, 1, acknowledged, Map.of());
        for (long position = 1; position <= 3_000; position++)
        {
            exporter.export(new TestRecord(1, position, "key-" + position % 17, "{\"n\":" + position + "}"));
        }
        assertThat(acknowledged.get()).as("nothing acknowledged before it is sent").isZero();
        exporter.flush();
        exporter.close();

        assertThat(acknowledged.get()).isEqualTo(3_000);
        final List<ConsumerRecord<byte[], byte[]>> records = kafka.readAll(topic);
        assertThat(records).hasSize(3_000);
        assertThat(records.stream().map(ConsumerRecord::partition).distinct().count())
            .as("keys spread over the topic's partitions").isGreaterThan(1);
        final Map<String, Long> lastPerKey = new HashMap<>();
        for (final ConsumerRecord<byte[], byte[]> record : records)
        {
            final long position = Long.parseLong(header(record, KafkaExporter.POSITION_HEADER));
            final Long previous = lastPerKey.put(new String(record.key(), StandardCharsets.UTF_8), position);
            assertThat(previous == null || previous < position).as("position %d after %s", position, previous).isTrue();
        }
    }

    @Test
    void leavesNothingInTheProducerBetweenCallsSoUnflushedRecordsNeverReachKafka() throws Exception
    {
        final String topic = "records-unflushed";
        kafka.createTopic(topic, 1);
        final AtomicLong acknowledged = new AtomicLong();
        final KafkaExporter exporter = exporter(topic, 1, acknowledged, Map.of());
        for (long position = 1; position <= 100; position++)
        {
            exporter.export(new TestRecord(1, position, "k", "{}"));
        }
        // The producer's linger is over by far: a record in its buffer would be sent by now.
        QuietPeriod.of(Duration.ofMillis(500), "nothing reaches Kafka before a flush");
        assertThat(kafka.recordCount(topic)).isZero();
        exporter.close();
        QuietPeriod.of(Duration.ofMillis(200), "nothing reaches Kafka after the close");
        assertThat(kafka.recordCount(topic)).isZero();
        assertThat(acknowledged.get()).isZero();
    }

    @Test
    void sendsAFullBufferFromExportAndWaitsForKafkaBeforeReturning() throws Exception
    {
        final String topic = "records-full-buffer";
        kafka.createTopic(topic, 3); // as operators are told to: no first-send wait for a new topic's leader
        final AtomicLong acknowledged = new AtomicLong();
        final KafkaExporter exporter = exporter(topic, 1, acknowledged, Map.of());
        for (long position = 1; position <= KafkaExporter.MAX_BUFFERED_RECORDS + 1; position++)
        {
            exporter.export(new TestRecord(1, position, "k" + position % 5, "{}"));
        }
        assertThat(acknowledged.get()).isEqualTo(KafkaExporter.MAX_BUFFERED_RECORDS);
        assertThat(kafka.recordCount(topic)).isEqualTo(KafkaExporter.MAX_BUFFERED_RECORDS);
        exporter.flush();
        exporter.close();
        assertThat(acknowledged.get()).isEqualTo(KafkaExporter.MAX_BUFFERED_RECORDS + 1);
    }

    @Test
    void throwsWithinTheBoundedWaitWhileKafkaIsDownAndDeliversEverythingOnceItIsBack() throws Exception
    {
        final String topic = "records-outage";
        kafka.createTopic(topic, 3);
        final AtomicLong acknowledged = new AtomicLong();
        final KafkaExporter exporter = exporter(topic, 1, acknowledged, Map.of());
        for (long position = 1; position <= 50; position++)
        {
            exporter.export(new TestRecord(1, position, "k" + position % 4, "{}"));
        }
        exporter.flush();
        assertThat(acknowledged.get()).isEqualTo(50);

        kafka.stopBroker();
        try
        {
            for (long position = 51; position <= 100; position++)
            {
                exporter.export(new TestRecord(1, position, "k" + position % 4, "{}"));
            }
            for (int attempt = 0; attempt < 2; attempt++)
            {
                final long startNs = System.nanoTime();
                assertThatThrownBy(exporter::flush).isInstanceOf(KafkaExportException.class)
                    .hasMessageContaining("50 of 50 records not acknowledged from position 51");
                final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
                assertThat(tookMs).as("a call with Kafka down returns within the bounded waits").isLessThan(15_000);
                assertThat(acknowledged.get()).isEqualTo(50);
            }
        }
        finally
        {
            kafka.startBroker();
        }
        exporter.flush();
        exporter.close();

        assertThat(acknowledged.get()).isEqualTo(100);
        final Map<Long, ConsumerRecord<byte[], byte[]>> byPosition = byPosition(kafka.readAll(topic));
        for (long position = 1; position <= 100; position++)
        {
            assertThat(byPosition).as("position %d", position).containsKey(position);
        }
    }

    @Test
    void refusesConfigurationsThatCannotWorkNamingTheProperty()
    {
        assertThatThrownBy(() -> KafkaExporterConfig.from(Map.of()))
            .isInstanceOfSatisfying(ExporterConfigException.class,
                e -> assertThat(e.property()).isEqualTo("bootstrap-servers"));
        assertRefused(Map.of("producer.acks", "1"), "producer.acks");
        assertRefused(Map.of("producer.enable.idempotence", "false"), "producer.enable.idempotence");
        assertRefused(Map.of("producer.max.in.flight.requests.per.connection", "6"),
            "producer.max.in.flight.requests.per.connection");
        assertRefused(Map.of("producer.lingr.ms", "5"), "producer.lingr.ms");
        assertRefused(Map.of("producer.value.serializer", "x"), "producer.value.serializer");
        assertRefused(Map.of("topic", "no spaces"), "topic");
        assertRefused(Map.of("bootstrap-server", "x:1"), "bootstrap-server");
        assertRefused(Map.of("producer.delivery.timeout.ms", "1000"), "producer.delivery.timeout.ms");

        final KafkaExporterConfig config = KafkaExporterConfig.from(Map.of("bootstrap-servers", "h:9092",
            "producer.acks", "all", "producer.linger.ms", "20", "producer.max.in.flight.requests.per.connection", "5"));
        final Map<String, Object> producer = config.producerProperties("c");
        assertThat(producer).containsEntry("linger.ms", "20").containsEntry("acks", "all")
            .containsEntry("enable.idempotence", "true").containsEntry("bootstrap.servers", "h:9092");
        assertThat(config.topic()).isEqualTo("sluice-records");
    }

    private static void assertRefused(final Map<String, String> extra, final String property)
    {
        final Map<String, String> properties = new HashMap<>(extra);
        properties.putIfAbsent("bootstrap-servers", "127.0.0.1:9092");
        assertThatThrownBy(() -> KafkaExporterConfig.from(properties))
            .isInstanceOfSatisfying(ExporterConfigException.class, e -> assertThat(e.property()).isEqualTo(property));
    }

    private static KafkaExporter exporter(
        final String topic, final int partitionId, final AtomicLong acknowledged, final Map<String, String> extra)
    {
        final Map<String, String> properties = new HashMap<>(extra);
        properties.put("bootstrap-servers", kafka.bootstrapServers());
        properties.put("topic", topic);
        final KafkaExporter exporter = new KafkaExporter();
        exporter.configure(new ExporterContext("kafka", partitionId, 0, Path.of("unused"), properties));
        exporter.open(position -> acknowledged.accumulateAndGet(position, Math::max));
        return exporter;
    }

    private static Map<Long, ConsumerRecord<byte[], byte[]>> byPosition(final List<ConsumerRecord<byte[], byte[]>> records)
    {
        final Map<Long, ConsumerRecord<byte[], byte[]>> byPosition = new LinkedHashMap<>();
        for (final ConsumerRecord<byte[], byte[]> record : records)
        {
            byPosition.putIfAbsent(Long.parseLong(header(record, KafkaExporter.POSITION_HEADER)), record);
        }
        return byPosition;
    }

    private static String header(final ConsumerRecord<byte[], byte[]> record, final String name)
    {
        return new String(record.headers().lastHeader(name).value(), StandardCharsets.US_ASCII);
    }
}
