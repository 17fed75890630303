package io.sluice.gateway.records;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.sluice.gateway.broker.AppendResult;
import io.sluice.gateway.broker.BrokerClient;
import io.sluice.gateway.broker.RecordToAppend;
import io.sluice.gateway.config.GatewayProperties;
import io.sluice.protocol.cluster.PartitionDistribution;
import org.springframework.stereotype.Service;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Writes client records: picks each record's partition, groups a request's records per partition into
 * batches (in request order, so positions follow it), appends every batch concurrently, and answers in
 * request order once all are committed. Thread-safe.
 */
@Service
public class RecordsService
{
    /** Batch limits that keep one append frame well under the transport's frame limit. */
    static final int MAX_BATCH_RECORDS = 4096;
    static final long MAX_BATCH_BYTES = 2L * 1024 * 1024;

    private final BrokerClient brokers;
    private final PartitionSelector selector;
    private final Duration timeout;
    private final Clock clock;
    private final Timer appendLatency;
    private final Counter recordsCommitted;
    private final Counter appendsFailed;

    public RecordsService(
        final BrokerClient brokers,
        final PartitionDistribution distribution,
        final GatewayProperties properties,
        final Clock clock,
        final MeterRegistry meters)
    {
        this.brokers = brokers;
        this.selector = new PartitionSelector(distribution.partitionCount());
        this.timeout = properties.getRequestTimeout();
        this.clock = clock;
        this.appendLatency = Timer.builder("sluice.gateway.append.latency")
            .description("Time from receiving a batch to its commit by a quorum")
            .publishPercentiles(0.5, 0.99)
            .register(meters);
        this.recordsCommitted = Counter.builder("sluice.gateway.records.committed")
            .description("Records acknowledged to clients").register(meters);
        this.appendsFailed = Counter.builder("sluice.gateway.appends.failed")
            .description("Append batches that failed or timed out").register(meters);
    }

    /** A record as parsed from the request: key may be null, payload is JSON text in UTF-8. */
    public record IncomingRecord(String key, byte[] payload)
    {
    }

    public CompletableFuture<List<RecordPosition>> write(final List<IncomingRecord> records)
    {
        final long timestamp = clock.millis();
        final Map<Integer, List<Integer>> indexesByPartition = new LinkedHashMap<>();
        for (int i = 0; i < records.size(); i++)
        {
            indexesByPartition.computeIfAbsent(selector.partitionFor(records.get(i).key()), p -> new ArrayList<>()).add(i);
        }

        final RecordPosition[] positions = new RecordPosition[records.size()];
        final List<CompletableFuture<Void>> batches = new ArrayList<>();
        for (final Map.Entry<Integer, List<Integer>> entry : indexesByPartition.entrySet())
        {
            final int partitionId = entry.getKey();
            final List<Integer> indexes = entry.getValue();
            int from = 0;
            while (from < indexes.size())
            {
                int to = from;
                long bytes = 0;
                while (to < indexes.size() && to - from < MAX_BATCH_RECORDS &&
                    (to == from || bytes + records.get(indexes.get(to)).payload().length <= MAX_BATCH_BYTES))
                {
                    bytes += records.get(indexes.get(to)).payload().length;
                    to++;
                }
                batches.add(appendBatch(partitionId, records, indexes.subList(from, to), timestamp, positions));
                from = to;
            }
        }
        return CompletableFuture.allOf(batches.toArray(CompletableFuture[]::new)).thenApply(done -> List.of(positions));
    }

    private CompletableFuture<Void> appendBatch(
        final int partitionId,
        final List<IncomingRecord> records,
        final List<Integer> indexes,
        final long timestamp,
        final RecordPosition[] positions)
    {
        final List<RecordToAppend> batch = new ArrayList<>(indexes.size());
        for (final int index : indexes)
        {
            final IncomingRecord record = records.get(index);
            batch.add(new RecordToAppend(record.key(), timestamp, record.payload()));
        }
        final long startedNanos = System.nanoTime();
        return brokers.append(partitionId, batch, timeout).handle((AppendResult appended, Throwable error) ->
        {
            appendLatency.record(Duration.ofNanos(System.nanoTime() - startedNanos));
            if (error != null)
            {
                appendsFailed.increment();
                throw error instanceof RuntimeException runtime ? runtime : new IllegalStateException(error);
            }
            if (appended.count() != indexes.size())
            {
                appendsFailed.increment();
                throw new IllegalStateException("partition " + partitionId + ": broker committed " + appended.count() +
                    " records of a batch of " + indexes.size());
            }
            for (int i = 0; i < indexes.size(); i++)
            {
                positions[indexes.get(i)] = new RecordPosition(partitionId, appended.firstPosition() + i);
            }
            recordsCommitted.increment(indexes.size());
            return null;
        });
    }
}
