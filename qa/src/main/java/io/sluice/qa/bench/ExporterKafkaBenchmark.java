package io.sluice.qa.bench;

import io.sluice.broker.Broker;
import io.sluice.broker.BrokerConfig;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.control.ExportingChange;
import io.sluice.broker.partition.Partition;
import io.sluice.exporter.kafka.KafkaBroker;
import io.sluice.exporter.kafka.KafkaExporter;
import io.sluice.exporter.kafka.KafkaExporterConfig;
import io.sluice.protocol.cluster.ExporterStatus;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import io.sluice.qa.cluster.PortAllocator;
import io.sluice.qa.cluster.SluiceCluster;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Records/s exported by Sluice into a real Kafka (KRaft, single node, in this JVM) against the same records produced
 * straight into it with the same producer settings, in the same run. Ratio: sluice / direct.
 * <p>
 * Sluice side: one broker in this JVM (one partition, RF 1) with a {@code kafka} exporter. Each round pauses
 * exporting, writes the round's records through the command API, then resumes and times until the exporter has
 * acknowledged the last one (so Kafka acknowledged every record). Direct side: the same number of records, same
 * keys, same JSON values and headers (each built right before its send), through a producer built from the
 * exporter's own settings, all sent then one flush. A third figure, "direct_chunked", produces in the exporter's chunks (send up to its buffer's size, wait for
 * every answer, repeat): the cost of never leaving records in the producer between calls, which is what keeps a
 * pause's promise. The sides alternate round by round; each figure is the median of the rounds.
 */
public final class ExporterKafkaBenchmark
{
    private static final int PAYLOAD_BYTES = 100;
    private static final int KEYS = 1_000;
    private static final int WRITE_BATCH = 100;
    private static final int TOPIC_PARTITIONS = 3;
    private static final String EXPORT_TOPIC = "sluice-export";
    private static final String DIRECT_TOPIC = "direct-produce";

    private ExporterKafkaBenchmark()
    {
    }

    public static void main(final String[] args)
    {
        BenchmarkRun.runAndExit("exporter-kafka", args, ExporterKafkaBenchmark::measure);
    }

    private static void measure(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start("exporter-kafka", args);
        final int records = run.choose("records_per_round", 10_000, 200_000);
        final int rounds = run.choose("rounds", 2, 5);
        final int chunk = KafkaExporter.MAX_BUFFERED_RECORDS;
        run.param("payload_bytes", PAYLOAD_BYTES).param("keys", KEYS).param("sluice_partitions", 1)
            .param("topic_partitions", TOPIC_PARTITIONS).param("exporter_chunk_records", chunk);

        final Path dir = Files.createTempDirectory("sluice-kafka-bench");
        try (KafkaBroker kafka = KafkaBroker.start(TOPIC_PARTITIONS))
        {
            kafka.createTopic(EXPORT_TOPIC, TOPIC_PARTITIONS);
            kafka.createTopic(DIRECT_TOPIC, TOPIC_PARTITIONS);
            final Map<String, String> exporterProperties = Map.of(
                KafkaExporterConfig.BOOTSTRAP_SERVERS, kafka.bootstrapServers(),
                KafkaExporterConfig.TOPIC, EXPORT_TOPIC);
            final Map<String, Object> producerSettings =
                KafkaExporterConfig.from(exporterProperties).producerProperties("sluice-bench-direct");
            run.param("producer_settings", new TreeMap<>(producerSettings).toString());

            try (SluiceSide sluice = SluiceSide.start(dir, exporterProperties);
                 Producer<byte[], byte[]> producer = new KafkaProducer<>(producerSettings))
            {
                final DirectSide direct = new DirectSide(producer, chunk);
                // Warm-up: JIT, Kafka's log segments, the producers' metadata.
                final int warmUp = run.choose("warm_up_records", 5_000, 20_000);
                sluice.round(run, "warm-up", warmUp);
                direct.round(run, "warm-up", warmUp, false);

                final double[] sluiceRates = new double[rounds];
                final double[] directRates = new double[rounds];
                final double[] chunkedRates = new double[rounds];
                for (int r = 0; r < rounds; r++)
                {
                    sluiceRates[r] = sluice.round(run, "round " + (r + 1), records);
                    directRates[r] = direct.round(run, "round " + (r + 1), records, false);
                    chunkedRates[r] = direct.round(run, "round " + (r + 1), records, true);
                }
                // What was timed is really in Kafka: every record the exporter acknowledged, every one produced.
                final long exported = kafka.recordCount(EXPORT_TOPIC);
                final long produced = kafka.recordCount(DIRECT_TOPIC);
                if (exported < sluice.writtenRecords() || produced != direct.producedRecords())
                {
                    throw new IllegalStateException("topic " + EXPORT_TOPIC + " holds " + exported + " of " +
                        sluice.writtenRecords() + " exported records, " + DIRECT_TOPIC + " " + produced + " of " +
                        direct.producedRecords());
                }
                run.log("checked: %,d records in %s, %,d in %s", exported, EXPORT_TOPIC, produced, DIRECT_TOPIC);
                final double sluiceRate = Stats.median(sluiceRates);
                final double directRate = Stats.median(directRates);
                final double chunkedRate = Stats.median(chunkedRates);
                run.result("sluice_records_per_s", Math.round(sluiceRate))
                    .result("direct_records_per_s", Math.round(directRate))
                    .result("direct_chunked_records_per_s", Math.round(chunkedRate))
                    .result("sluice_write_records_per_s", Math.round(sluice.writeRate()))
                    .ratio(sluiceRate / directRate);
            }
        }
        finally
        {
            SluiceCluster.deleteRecursively(dir);
        }
        run.finish();
    }

    // ------------------------------------------------------------------------------------------- sluice

    /** One broker with a kafka exporter; each round writes while paused, then times the export after resume. */
    private static final class SluiceSide implements AutoCloseable
    {
        private final Broker broker;
        private final Partition partition;
        private final TransportClient client = new TransportClient(TransportConfig.defaults());
        private final InetSocketAddress address;
        private long stateVersion;
        private long writtenRecords;
        private long writeNs;

        private SluiceSide(final Broker broker, final InetSocketAddress address)
        {
            this.broker = broker;
            this.partition = broker.partition(1);
            this.address = address;
        }

        static SluiceSide start(final Path dir, final Map<String, String> exporterProperties) throws Exception
        {
            final PartitionDistribution distribution = new PartitionDistribution(
                PartitionDistribution.parseAddresses(PortAllocator.loopbackBrokerList(1)), 1, 1);
            final Broker broker = Broker.start(BrokerConfig.of(0, distribution, dir,
                Map.of("kafka", new ExporterConfig("kafka", KafkaExporter.TYPE, exporterProperties))));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (broker.partition(1).status().role() != PartitionRole.LEADER || !broker.partition(1).director().isActive())
            {
                if (System.nanoTime() > deadline)
                {
                    broker.close();
                    throw new IllegalStateException("partition 1 had no leader within 60 s");
                }
                Thread.sleep(20);
            }
            return new SluiceSide(broker, new InetSocketAddress("127.0.0.1", distribution.commandAddress(0).getPort()));
        }

        double round(final BenchmarkRun run, final String name, final int records) throws Exception
        {
            broker.exportingControl().change(1, ExportingChange.of(++stateVersion, ExportingState.PAUSED, 1), false)
                .get(30, TimeUnit.SECONDS);
            final long first = partition.state().lastPosition() + 1;
            write(records);
            final long last = partition.state().lastPosition();
            if (last - first + 1 != records)
            {
                throw new IllegalStateException("wrote " + records + " records but positions " + first + ".." + last);
            }

            final long startNs = System.nanoTime();
            broker.exportingControl().change(1, ExportingChange.of(++stateVersion, ExportingState.EXPORTING, 1), false)
                .get(30, TimeUnit.SECONDS);
            final long deadline = startNs + TimeUnit.MINUTES.toNanos(3);
            while (acknowledged() < last)
            {
                if (System.nanoTime() > deadline)
                {
                    throw new IllegalStateException("exporter acknowledged " + acknowledged() + " of " + last +
                        " within 3 minutes: " + partition.director().exporterStatuses());
                }
                Thread.sleep(1);
            }
            final double rate = Stats.perSecond(records, System.nanoTime() - startNs);
            run.log("sluice %s: %,d records exported in %.2f s: %,.0f records/s", name, records,
                records / rate, rate);
            return rate;
        }

        long writtenRecords()
        {
            return writtenRecords;
        }

        double writeRate()
        {
            return Stats.perSecond(writtenRecords, writeNs);
        }

        private long acknowledged()
        {
            long acknowledged = 0;
            for (final ExporterStatus status : partition.director().exporterStatuses())
            {
                acknowledged = status.acknowledgedPosition();
            }
            return acknowledged;
        }

        /** Writes through the command API, 4 batches in flight, retrying nothing: a failed batch fails the run. */
        private void write(final int records) throws Exception
        {
            final long startNs = System.nanoTime();
            final Semaphore window = new Semaphore(4);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final AtomicLong committed = new AtomicLong();
            for (int from = 0; from < records; from += WRITE_BATCH)
            {
                final int count = Math.min(WRITE_BATCH, records - from);
                window.acquire();
                if (failure.get() != null)
                {
                    break;
                }
                client.send(address, appendRequest(writtenRecords + from, count), Duration.ofSeconds(30))
                    .whenComplete((response, error) ->
                    {
                        if (error != null || !AppendRequests.isAppended(response))
                        {
                            failure.compareAndSet(null, error != null ? error :
                                new IllegalStateException("append refused"));
                        }
                        else
                        {
                            committed.addAndGet(count);
                        }
                        window.release();
                    });
            }
            window.acquire(4);
            window.release(4);
            if (failure.get() != null)
            {
                throw new IllegalStateException("writing records failed: " + failure.get(), failure.get());
            }
            writtenRecords += records;
            writeNs += System.nanoTime() - startNs;
        }

        @Override
        public void close()
        {
            client.close();
            broker.close();
        }
    }

    /** {@code count} records keyed and numbered from {@code firstSeq}, as one append request of partition 1. */
    private static MessageWriter appendRequest(final long firstSeq, final int count)
    {
        // "key-" and at most 3 digits
        return AppendRequests.encode(1, count, PAYLOAD_BYTES + 7, i -> key(firstSeq + i), i -> payload(firstSeq + i));
    }

    private static String key(final long seq)
    {
        return "key-" + seq % KEYS;
    }

    /** A JSON payload of exactly {@value #PAYLOAD_BYTES} bytes. */
    private static byte[] payload(final long seq)
    {
        final String head = "{\"seq\":" + seq + ",\"pad\":\"";
        return (head + "x".repeat(PAYLOAD_BYTES - head.length() - 2) + "\"}").getBytes(StandardCharsets.US_ASCII);
    }

    // ------------------------------------------------------------------------------------------- direct

    /** The same records produced straight into Kafka with the exporter's producer settings. */
    private static final class DirectSide
    {
        private final Producer<byte[], byte[]> producer;
        private final int chunk;
        private long seq;

        DirectSide(final Producer<byte[], byte[]> producer, final int chunk)
        {
            this.producer = producer;
            this.chunk = chunk;
        }

        long producedRecords()
        {
            return seq;
        }

        /**
         * Produces {@code records} into the direct topic (one topic for every round, as the exporter has one);
         * {@code chunked}: wait for every answer each {@code chunk} records.
         */
        double round(final BenchmarkRun run, final String name, final int records, final boolean chunked)
        {
            final String topic = DIRECT_TOPIC;
            // Each record is built right before its send, as a producing application (and the exporter) does.
            final long timestamp = System.currentTimeMillis();
            final AtomicReference<Exception> failure = new AtomicReference<>();
            final long startNs = System.nanoTime();
            for (int i = 0; i < records; i++, seq++)
            {
                producer.send(record(topic, seq, timestamp), (metadata, error) ->
                {
                    if (error != null)
                    {
                        failure.compareAndSet(null, error);
                    }
                });
                if (chunked && (i + 1) % chunk == 0)
                {
                    producer.flush();
                }
            }
            producer.flush();
            final long elapsedNs = System.nanoTime() - startNs;
            if (failure.get() != null)
            {
                throw new IllegalStateException("direct produce failed: " + failure.get(), failure.get());
            }
            final double rate = Stats.perSecond(records, elapsedNs);
            run.log("direct%s %s: %,d records produced in %.2f s: %,.0f records/s", chunked ? " chunked" : "", name,
                records, elapsedNs / 1e9, rate);
            return rate;
        }

        /**
         * What the exporter hands to its producer for the same record: the key, the record's JSON line (the bytes
         * are built fresh, as the exporter builds them from the log) and the two headers.
         */
        private static ProducerRecord<byte[], byte[]> record(final String topic, final long seq, final long timestamp)
        {
            final String key = key(seq);
            final String json = "{\"partitionId\":1,\"position\":" + (seq + 1) + ",\"key\":\"" + key +
                "\",\"timestamp\":" + timestamp + ",\"payload\":" + new String(payload(seq), StandardCharsets.US_ASCII) + "}";
            final RecordHeaders headers = new RecordHeaders();
            headers.add(new RecordHeader(KafkaExporter.PARTITION_HEADER, "1".getBytes(StandardCharsets.US_ASCII)));
            headers.add(new RecordHeader(KafkaExporter.POSITION_HEADER,
                Long.toString(seq + 1).getBytes(StandardCharsets.US_ASCII)));
            return new ProducerRecord<>(topic, null, key.getBytes(StandardCharsets.UTF_8),
                json.getBytes(StandardCharsets.UTF_8), headers);
        }
    }
}
