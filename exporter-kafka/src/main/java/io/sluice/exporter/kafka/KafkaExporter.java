package io.sluice.exporter.kafka;

import io.sluice.exporter.spi.CommittedRecord;
import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterController;
import io.sluice.exporter.spi.RecordJson;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Exports each record as one Kafka record (type {@code kafka}, settings in {@link KafkaExporterConfig}): key = the
 * record's key (null without one), value = its {@link RecordJson} line, headers {@value #PARTITION_HEADER} and
 * {@value #POSITION_HEADER} in decimal ASCII, so a consumer can drop the duplicates of at-least-once delivery.
 * <p>
 * The sink is written only inside {@link #export} and {@link #flush}: records are kept in the exporter's own
 * bounded buffer, and a call that sends them waits until Kafka answered for every one before it returns, so no
 * record is left in the producer's buffer for its I/O thread to send after a pause. {@code export} sends when the
 * buffer is full, {@code flush} sends whatever is buffered. A position is acknowledged once Kafka acknowledged
 * every record up to it.
 * <p>
 * Order per (Sluice partition, key): one idempotent producer per exporter instance (a partition's leader), the
 * records handed over in position order, a key always on the same Kafka partition, and after a failure the
 * unacknowledged records are sent again in order, so the first copy of each record keeps the order.
 * <p>
 * Failures: a send that fails, or a call that cannot reach Kafka within the producer's bounded waits, throws (the
 * director retries with backoff and shows the exporter as retrying). The producer is then closed at once, which
 * aborts what it still held, and a new one is made on the next call. Each call that sends (successful or not) is
 * reported to {@link ExporterController#sinkWriteCompleted} with its records and duration, like an opensearch bulk
 * ({@code sluice_exporter_bulk_requests}, {@code sluice_exporter_bulk_latency_seconds}). Not thread-safe: the director calls one
 * instance from one thread at a time.
 */
public final class KafkaExporter implements Exporter
{
    public static final String TYPE = "kafka";
    public static final String PARTITION_HEADER = "sluice-partition-id";
    public static final String POSITION_HEADER = "sluice-position";

    /** Records buffered before {@code export} sends them itself: bounds memory while the sink is down. */
    public static final int MAX_BUFFERED_RECORDS = 10_000;
    /** Bytes (keys and values) buffered before {@code export} sends them itself. */
    public static final int MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

    private final Function<Map<String, Object>, Producer<byte[], byte[]>> producerFactory;
    private final ExpandableArrayBuffer json = new ExpandableArrayBuffer(1024);
    private final List<ProducerRecord<byte[], byte[]>> buffered = new ArrayList<>();
    private long[] bufferedPositions = new long[1024];
    private int bufferedBytes;

    private KafkaExporterConfig config;
    private String clientId;
    private byte[] partitionHeader;
    private ExporterController controller;
    private Producer<byte[], byte[]> producer;

    public KafkaExporter()
    {
        this(KafkaProducer::new);
    }

    /** For tests that wrap the producer; {@code producerFactory} gets the settings of {@link KafkaExporterConfig}. */
    KafkaExporter(final Function<Map<String, Object>, Producer<byte[], byte[]>> producerFactory)
    {
        this.producerFactory = producerFactory;
    }

    @Override
    public void configure(final ExporterContext context)
    {
        config = KafkaExporterConfig.from(context.settings());
        clientId = "sluice-" + context.id() + "-partition-" + context.partitionId() + "-broker-" + context.brokerId();
        partitionHeader = Integer.toString(context.partitionId()).getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public void open(final ExporterController controller)
    {
        this.controller = controller;
    }

    @Override
    public void export(final CommittedRecord record) throws Exception
    {
        if (buffered.size() >= MAX_BUFFERED_RECORDS || bufferedBytes >= MAX_BUFFERED_BYTES)
        {
            sendBuffered();
        }
        final int length = RecordJson.write(record, json, 0);
        final byte[] value = new byte[length];
        json.getBytes(0, value);
        final byte[] key = keyOf(record);

        final RecordHeaders headers = new RecordHeaders();
        headers.add(new RecordHeader(PARTITION_HEADER, partitionHeader));
        headers.add(new RecordHeader(POSITION_HEADER,
            Long.toString(record.position()).getBytes(StandardCharsets.US_ASCII)));
        if (buffered.size() == bufferedPositions.length)
        {
            bufferedPositions = java.util.Arrays.copyOf(bufferedPositions, bufferedPositions.length * 2);
        }
        bufferedPositions[buffered.size()] = record.position();
        buffered.add(new ProducerRecord<>(config.topic(), null, key, value, headers));
        bufferedBytes += length + (key == null ? 0 : key.length);
    }

    @Override
    public void flush() throws Exception
    {
        if (!buffered.isEmpty())
        {
            sendBuffered();
        }
    }

    /** Drops what is buffered (never acknowledged, so exported again) and closes the producer at once. */
    @Override
    public void close()
    {
        buffered.clear();
        bufferedBytes = 0;
        discardProducer();
    }

    /**
     * Sends every buffered record and waits for Kafka's answers; acknowledges the longest prefix Kafka took and
     * keeps the rest for the next call, which then starts on a new producer.
     */
    private void sendBuffered() throws KafkaExportException
    {
        final int count = buffered.size();
        final Outcomes outcomes = new Outcomes(count);
        int handedOver = 0;
        Exception failure = null;
        final long startNanos = System.nanoTime();
        try
        {
            if (producer == null)
            {
                producer = producerFactory.apply(config.producerProperties(clientId));
                // Fetches the topic's metadata once (bounded by max.block.ms), so the sends below do not each wait
                // for it when Kafka is unreachable.
                producer.partitionsFor(config.topic());
            }
            for (int i = 0; i < count; i++)
            {
                producer.send(buffered.get(i), outcomes.callback(i));
                handedOver++;
                if (outcomes.anyFailed())
                {
                    break; // a send already failed: the rest would be sent again after it anyway
                }
            }
            producer.flush();
        }
        catch (final KafkaException | IllegalStateException e)
        {
            failure = e;
        }
        finally
        {
            // One write to the sink, as the opensearch exporter reports a bulk: the exporters' latency metrics.
            controller.sinkWriteCompleted(count, System.nanoTime() - startNanos);
        }

        final int acknowledged = outcomes.acknowledgedPrefix(handedOver);
        if (acknowledged > 0)
        {
            controller.acknowledge(bufferedPositions[acknowledged - 1]);
            removeFirst(acknowledged);
        }
        if (acknowledged < count)
        {
            discardProducer();
            final Exception cause = failure != null ? failure : outcomes.firstError();
            throw new KafkaExportException(config + ": " + (count - acknowledged) + " of " + count +
                " records not acknowledged from position " + bufferedPositions[0] + ": " + describe(cause), cause);
        }
    }

    private void removeFirst(final int count)
    {
        if (count == buffered.size())
        {
            buffered.clear();
            bufferedBytes = 0;
            return;
        }
        buffered.subList(0, count).clear();
        System.arraycopy(bufferedPositions, count, bufferedPositions, 0, buffered.size());
        int bytes = 0;
        for (final ProducerRecord<byte[], byte[]> record : buffered)
        {
            bytes += record.value().length + (record.key() == null ? 0 : record.key().length);
        }
        bufferedBytes = bytes;
    }

    /** Closes without waiting: whatever the producer still holds is aborted, so nothing of it is sent later. */
    private void discardProducer()
    {
        if (producer != null)
        {
            try
            {
                producer.close(Duration.ZERO);
            }
            catch (final RuntimeException ignored)
            {
                // closing a failed producer may fail too; it holds nothing that was acknowledged
            }
            producer = null;
        }
    }

    private static byte[] keyOf(final CommittedRecord record)
    {
        if (record.keyLength() < 0)
        {
            return null;
        }
        final byte[] key = new byte[record.keyLength()];
        final DirectBuffer buffer = record.buffer();
        buffer.getBytes(record.keyOffset(), key);
        return key;
    }

    private static String describe(final Throwable cause)
    {
        if (cause == null)
        {
            return "no answer from Kafka";
        }
        return cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
    }

    /** Kafka's answer to each send of one call, written by the producer's I/O thread. */
    private static final class Outcomes
    {
        private static final byte PENDING = 0;
        private static final byte DONE = 1;
        private static final byte FAILED = 2;

        private final java.util.concurrent.atomic.AtomicIntegerArray states;
        private volatile Exception firstError;
        private volatile boolean anyFailed;

        Outcomes(final int count)
        {
            states = new java.util.concurrent.atomic.AtomicIntegerArray(count);
        }

        Callback callback(final int index)
        {
            return (final RecordMetadata metadata, final Exception error) ->
            {
                if (error == null)
                {
                    states.set(index, DONE);
                }
                else
                {
                    if (firstError == null)
                    {
                        firstError = error;
                    }
                    anyFailed = true;
                    states.set(index, FAILED);
                }
            };
        }

        boolean anyFailed()
        {
            return anyFailed;
        }

        Exception firstError()
        {
            return firstError;
        }

        int acknowledgedPrefix(final int handedOver)
        {
            int prefix = 0;
            while (prefix < handedOver && states.get(prefix) == DONE)
            {
                prefix++;
            }
            return prefix;
        }
    }
}
