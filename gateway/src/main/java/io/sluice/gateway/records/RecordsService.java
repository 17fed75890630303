package io.sluice.gateway.records;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.sluice.gateway.broker.AppendId;
import io.sluice.gateway.broker.AppendResult;
import io.sluice.gateway.broker.BrokerClient;
import io.sluice.gateway.broker.RecordToAppend;
import io.sluice.gateway.config.GatewayProperties;
import io.sluice.gateway.config.RecordsProperties;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.message.AppendLimits;
import org.springframework.stereotype.Service;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Writes client records: picks each record's partition, groups a request's records per partition into
 * batches (in request order, so positions follow it), appends every batch concurrently, and answers in
 * request order once all are committed.
 * <p>
 * Every batch carries an {@link AppendId}, so no retry commits it twice: with a client's {@code Idempotency-Key}
 * the id is (key, sub-batch index) and the plan of sub-batches is a function of the request alone (records
 * without a key go to the key's home partition instead of round-robin), so a retry through any gateway names the
 * same sub-batches; sub-batch 0 always goes to the home partition, first and alone (empty when no record goes
 * there), so a key reused with another body is refused there before anything is appended anywhere. Without a
 * client key, the gateway's own retries of a timed-out attempt carry a random id of the request. Thread-safe.
 */
@Service
public class RecordsService
{
    /** Batch limits: one batch is one Raft entry a partition can replicate (keys and headers counted, not payloads alone). */
    static final int MAX_BATCH_RECORDS = 4096;
    static final long MAX_BATCH_BYTES = AppendLimits.MAX_BATCH_BYTES;

    private final BrokerClient brokers;
    private final PartitionSelector selector;
    private final Duration timeout;
    private final long clientWindowMs;
    private final long gatewayWindowMs;
    private final Clock clock;
    private final Timer appendLatency;
    private final Counter recordsCommitted;
    private final Counter appendsFailed;

    public RecordsService(
        final BrokerClient brokers,
        final PartitionDistribution distribution,
        final GatewayProperties properties,
        final RecordsProperties records,
        final Clock clock,
        final MeterRegistry meters)
    {
        this.brokers = brokers;
        this.selector = new PartitionSelector(distribution.partitionCount());
        this.timeout = properties.getRequestTimeout();
        this.clientWindowMs = records.getIdempotencyWindow().toMillis();
        // The gateway's own ids only need to outlive its retries of one request, which end at the request timeout.
        this.gatewayWindowMs = Math.max(Duration.ofSeconds(30).toMillis(), 6 * timeout.toMillis());
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
        /** Bytes the record takes in an append batch (the controller keeps one record within a batch). */
        long encodedBytes()
        {
            return AppendLimits.recordBytes(key == null ? 0 : key.getBytes(StandardCharsets.UTF_8).length, payload.length);
        }
    }

    public CompletableFuture<List<RecordPosition>> write(final List<IncomingRecord> records)
    {
        return write(records, null, 0);
    }

    /**
     * Writes records under a client's idempotency key (null for none) with the digest of the request body: the
     * same key and digest within the window answer the first positions and append nothing again; the same key with
     * another digest fails with {@link io.sluice.gateway.broker.BrokerErrorException} CONFLICT, nothing appended.
     */
    public CompletableFuture<List<RecordPosition>> write(
        final List<IncomingRecord> records, final String idempotencyKey, final long bodyDigest)
    {
        final long timestamp = clock.millis();
        final int home = idempotencyKey == null ? -1 : selector.partitionFor(idempotencyKey);
        final Map<Integer, List<Integer>> indexesByPartition = new LinkedHashMap<>();
        if (home > 0)
        {
            indexesByPartition.put(home, new ArrayList<>());
        }
        for (int i = 0; i < records.size(); i++)
        {
            final String key = records.get(i).key();
            final int partitionId = key == null && home > 0 ? home : selector.partitionFor(key);
            indexesByPartition.computeIfAbsent(partitionId, p -> new ArrayList<>()).add(i);
        }

        final List<Chunk> chunks = new ArrayList<>();
        for (final Map.Entry<Integer, List<Integer>> entry : indexesByPartition.entrySet())
        {
            final int partitionId = entry.getKey();
            final List<Integer> indexes = entry.getValue();
            if (indexes.isEmpty())
            {
                chunks.add(new Chunk(partitionId, indexes)); // the home partition's claim of the key
            }
            int from = 0;
            while (from < indexes.size())
            {
                int to = from;
                long bytes = 0;
                while (to < indexes.size() && to - from < MAX_BATCH_RECORDS &&
                    (to == from || bytes + records.get(indexes.get(to)).encodedBytes() <= MAX_BATCH_BYTES))
                {
                    bytes += records.get(indexes.get(to)).encodedBytes();
                    to++;
                }
                chunks.add(new Chunk(partitionId, indexes.subList(from, to)));
                from = to;
            }
        }

        final RecordPosition[] positions = new RecordPosition[records.size()];
        final String requestId = idempotencyKey == null ? UUID.randomUUID().toString() : null;
        final List<AppendId> ids = new ArrayList<>(chunks.size());
        for (int i = 0; i < chunks.size(); i++)
        {
            ids.add(idempotencyKey != null ?
                AppendId.of(AppendId.CLIENT, idempotencyKey, i, bodyDigest, clientWindowMs) :
                AppendId.of(AppendId.GATEWAY, requestId, i, 0, gatewayWindowMs));
        }
        if (idempotencyKey == null)
        {
            final List<CompletableFuture<Void>> batches = new ArrayList<>();
            for (int i = 0; i < chunks.size(); i++)
            {
                batches.add(appendBatch(chunks.get(i), records, timestamp, ids.get(i), positions));
            }
            return CompletableFuture.allOf(batches.toArray(CompletableFuture[]::new)).thenApply(done -> List.of(positions));
        }
        // Sub-batch 0 on the home partition first: a key reused with another body stops there, before any append.
        return appendBatch(chunks.get(0), records, timestamp, ids.get(0), positions).thenCompose(claimed ->
        {
            final List<CompletableFuture<Void>> batches = new ArrayList<>();
            for (int i = 1; i < chunks.size(); i++)
            {
                batches.add(appendBatch(chunks.get(i), records, timestamp, ids.get(i), positions));
            }
            return CompletableFuture.allOf(batches.toArray(CompletableFuture[]::new)).thenApply(done -> List.of(positions));
        });
    }

    /** One sub-batch of a request: records of one partition, in request order. */
    private record Chunk(int partitionId, List<Integer> indexes)
    {
    }

    private CompletableFuture<Void> appendBatch(
        final Chunk chunk,
        final List<IncomingRecord> records,
        final long timestamp,
        final AppendId id,
        final RecordPosition[] positions)
    {
        final int partitionId = chunk.partitionId();
        final List<Integer> indexes = chunk.indexes();
        final List<RecordToAppend> batch = new ArrayList<>(indexes.size());
        for (final int index : indexes)
        {
            final IncomingRecord record = records.get(index);
            batch.add(new RecordToAppend(record.key(), timestamp, record.payload()));
        }
        final long startedNanos = System.nanoTime();
        return brokers.append(partitionId, batch, id, timeout).handle((AppendResult appended, Throwable error) ->
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
