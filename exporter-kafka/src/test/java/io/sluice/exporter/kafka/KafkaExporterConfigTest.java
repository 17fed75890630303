package io.sluice.exporter.kafka;

import io.sluice.exporter.spi.ExporterConfigException;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterController;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class KafkaExporterConfigTest
{
    @Test
    void settingsBoundFromEnvironmentVariablesAreTakenInEverySpelling()
    {
        // SLUICE_EXPORTERS_BUS_BOOTSTRAPSERVERS, SLUICE_EXPORTERS_BUS_TOPIC,
        // SLUICE_EXPORTERS_BUS_PRODUCER_LINGER_MS, SLUICE_EXPORTERS_BUS_PRODUCER_COMPRESSIONTYPE
        final KafkaExporterConfig config = KafkaExporterConfig.from(new ExporterContext("bus", 1, 0, null, Map.of(
            "bootstrapservers", "k:9092", "TOPIC", "events", "producer.linger.ms", "2",
            "producer.compressiontype", "lz4")).settings());
        assertThat(config.bootstrapServers()).isEqualTo("k:9092");
        assertThat(config.topic()).isEqualTo("events");
        assertThat(config.producerProperties("c")).containsEntry("linger.ms", "2")
            .containsEntry("compression.type", "lz4");
        assertThat(KafkaExporterConfig.from(Map.of("bootstrap.servers", "a:1")).bootstrapServers()).isEqualTo("a:1");
        assertThat(KafkaExporterConfig.from(Map.of("BOOTSTRAP_SERVERS", "a:1")).bootstrapServers()).isEqualTo("a:1");
        assertThat(KafkaExporterConfig.from(Map.of("bootstrapServers", "a:1")).bootstrapServers()).isEqualTo("a:1");
    }

    @Test
    void aRefusalNamesTheFullSettingAsGiven()
    {
        assertThatThrownBy(() -> KafkaExporterConfig.from(new ExporterContext("bus", 0, 0, null,
            Map.of("bootstrapservers", "k:1", "producer.acks", "1")).settings()))
            .isInstanceOf(ExporterConfigException.class)
            .hasMessageStartingWith("sluice.exporters.bus.producer.acks: '1': the exporter needs acks=all");
        assertThatThrownBy(() -> KafkaExporterConfig.from(new ExporterContext("bus", 0, 0, null, Map.of()).settings()))
            .hasMessage("sluice.exporters.bus.bootstrap-servers: required (for a kafka exporter: " +
                "host:port[,host:port...])");
        assertThatThrownBy(() -> KafkaExporterConfig.from(new ExporterContext("bus", 0, 0, null,
            Map.of("bootstrapservers", "k:1", "retry.max-backoff", "5s")).settings()))
            .as("retry.max-backoff is the broker's: the broker takes it off before the exporter sees its settings")
            .hasMessageStartingWith("sluice.exporters.bus.retry.max-backoff: unknown setting of a kafka exporter");
    }

    @Test
    void eachSendIsReportedAsOneSinkWriteWithItsRecordsAndLatency() throws Exception
    {
        final MockProducer<byte[], byte[]> producer =
            new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
        final KafkaExporter exporter = new KafkaExporter(settings -> producer);
        exporter.configure(new ExporterContext("bus", 1, 0, Path.of("unused"), Map.of("bootstrap-servers", "k:1")));
        final AtomicLong acknowledged = new AtomicLong();
        final AtomicLong writes = new AtomicLong();
        final AtomicLong records = new AtomicLong();
        final AtomicLong nanos = new AtomicLong();
        exporter.open(new ExporterController()
        {
            @Override
            public void acknowledge(final long position)
            {
                acknowledged.set(position);
            }

            @Override
            public void sinkWriteCompleted(final int count, final long latencyNanos)
            {
                writes.incrementAndGet();
                records.addAndGet(count);
                nanos.addAndGet(latencyNanos);
            }
        });
        for (int position = 1; position <= 3; position++)
        {
            exporter.export(new TestRecord(1, position, "k", "{}"));
        }
        assertThat(writes).hasValue(0);
        exporter.flush();
        assertThat(producer.history()).hasSize(3);
        assertThat(acknowledged).hasValue(3);
        assertThat(writes).hasValue(1);
        assertThat(records).hasValue(3);
        assertThat(nanos.get()).isPositive();
        exporter.close();
    }
}
