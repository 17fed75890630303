package io.sluice.exporter.kafka;

import kafka.server.BrokerServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real single-node Kafka (KRaft, broker and controller combined) inside this JVM, on a loopback port, that can
 * be stopped and started again on the same data and port: {@code try (KafkaBroker kafka = KafkaBroker.start())}.
 * Built on Kafka's own test kit (pinned to the Kafka version of the build; its API moves between minors).
 * <p>
 * For tests and benchmarks only. Not thread-safe: one thread starts and stops it.
 */
public final class KafkaBroker implements AutoCloseable
{
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

    private final KafkaClusterTestKit cluster;
    private final String bootstrapServers;
    private boolean brokerRunning;

    private KafkaBroker(final KafkaClusterTestKit cluster, final String bootstrapServers)
    {
        this.cluster = cluster;
        this.bootstrapServers = bootstrapServers;
        this.brokerRunning = true;
    }

    /** Starts a fresh node on a free loopback port with {@code partitions} as the default partition count. */
    public static KafkaBroker start(final int defaultPartitions) throws Exception
    {
        final TestKitNodes nodes = new TestKitNodes.Builder()
            .setCombined(true)
            .setNumBrokerNodes(1)
            .setNumControllerNodes(1)
            .build();
        final KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(nodes)
            .setConfigProp("offsets.topic.replication.factor", "1")
            .setConfigProp("transaction.state.log.replication.factor", "1")
            .setConfigProp("transaction.state.log.min.isr", "1")
            .setConfigProp("num.partitions", Integer.toString(defaultPartitions))
            .setConfigProp("group.initial.rebalance.delay.ms", "0")
            .build();
        try
        {
            cluster.format();
            cluster.startup();
            cluster.waitForReadyBrokers();
        }
        catch (final Exception e)
        {
            cluster.close();
            throw e;
        }
        // The kit binds each listener's port once and opens the same port again when a node restarts.
        return new KafkaBroker(cluster, cluster.bootstrapServers());
    }

    public static KafkaBroker start() throws Exception
    {
        return start(3);
    }

    public String bootstrapServers()
    {
        return bootstrapServers;
    }

    /** Stops the broker (the port refuses connections); its data stays. */
    public void stopBroker()
    {
        if (brokerRunning)
        {
            broker().shutdown();
            broker().awaitShutdown();
            brokerRunning = false;
        }
    }

    /** Starts the broker again on the same data and port and waits until it serves requests. */
    public void startBroker() throws Exception
    {
        if (!brokerRunning)
        {
            broker().startup();
            brokerRunning = true;
            cluster.waitForReadyBrokers();
        }
    }

    public void createTopic(final String topic, final int partitions) throws Exception
    {
        try (Admin admin = admin())
        {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short)1))).all()
                .get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** The sum of the topic's end offsets: how many records it holds. */
    public long recordCount(final String topic)
    {
        try (KafkaConsumer<byte[], byte[]> consumer = consumer())
        {
            final List<TopicPartition> partitions = partitionsOf(consumer, topic);
            long count = 0;
            for (final long end : consumer.endOffsets(partitions, CALL_TIMEOUT).values())
            {
                count += end;
            }
            return count;
        }
    }

    /** Every record of the topic, partition by partition in offset order (so per key in the order Kafka holds it). */
    public List<ConsumerRecord<byte[], byte[]>> readAll(final String topic)
    {
        try (KafkaConsumer<byte[], byte[]> consumer = consumer())
        {
            final List<TopicPartition> partitions = partitionsOf(consumer, topic);
            final Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, CALL_TIMEOUT);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            final List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
            final long deadline = System.nanoTime() + CALL_TIMEOUT.toNanos();
            while (!reachedEnds(consumer, ends))
            {
                if (System.nanoTime() - deadline > 0)
                {
                    throw new IllegalStateException("could not read " + topic + " to its end offsets " + ends +
                        " within " + CALL_TIMEOUT);
                }
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
            records.sort(java.util.Comparator.<ConsumerRecord<byte[], byte[]>>comparingInt(ConsumerRecord::partition)
                .thenComparingLong(ConsumerRecord::offset));
            return records;
        }
    }

    public Admin admin()
    {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
    }

    public KafkaConsumer<byte[], byte[]> consumer()
    {
        return new KafkaConsumer<>(Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false",
            ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
            ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000"),
            new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    @Override
    public void close() throws Exception
    {
        cluster.close();
    }

    private BrokerServer broker()
    {
        return cluster.brokers().values().iterator().next();
    }

    private static List<TopicPartition> partitionsOf(final KafkaConsumer<byte[], byte[]> consumer, final String topic)
    {
        return consumer.partitionsFor(topic, CALL_TIMEOUT).stream()
            .map(info -> new TopicPartition(topic, info.partition()))
            .toList();
    }

    private static boolean reachedEnds(final KafkaConsumer<byte[], byte[]> consumer, final Map<TopicPartition, Long> ends)
    {
        for (final Map.Entry<TopicPartition, Long> end : ends.entrySet())
        {
            if (consumer.position(end.getKey(), CALL_TIMEOUT) < end.getValue())
            {
                return false;
            }
        }
        return true;
    }
}
