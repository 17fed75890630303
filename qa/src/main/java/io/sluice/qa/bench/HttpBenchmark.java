package io.sluice.qa.bench;

import io.sluice.qa.cluster.PortAllocator;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.broker.Broker;
import io.sluice.broker.BrokerConfig;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.gateway.GatewayApplication;
import io.sluice.gateway.broker.RecordToAppend;
import io.sluice.gateway.broker.SbeBrokerClient;
import io.sluice.gateway.records.PartitionSelector;
import io.sluice.gateway.topology.PolledClusterTopology;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * Records/s through the gateway's {@code POST /v1/records} (JSON arrays of 100 records, W requests in flight,
 * HTTP/1.1 keep-alive) against the broker command API driven directly with the gateway's own
 * {@link SbeBrokerClient} (batches of the same 100 records, the same W in flight), in one JVM with 3 brokers
 * (6 partitions, RF 3, file exporter) and the gateway application on free ports. Ratio: http / direct, so
 * 1.0 means HTTP, JSON and the Spring stack cost nothing over the broker round trip.
 * <p>
 * Both sides do the same broker work: batch {@code i} holds 100 records whose keys all hash to partition
 * {@code i mod 6 + 1} (keys chosen with the gateway's {@link PartitionSelector}), so each HTTP request becomes
 * exactly one append, like each direct batch. Both are warmed up, then measured in alternating rounds of equal
 * length (the order flipping each round) so load drift on a shared machine hits both alike. A third, unrated
 * figure sends requests whose 100 keys spread over every partition, as an ordinary client would; the gateway
 * then splits each request into one append per partition.
 * <p>
 * A batch counts once it is committed (a 200 for HTTP, an append result of 100 records for direct); failures
 * are counted and reported, never counted as records. Latency is per batch, from send to answer.
 */
public final class HttpBenchmark
{
    private static final int BROKERS = 3;
    private static final int PARTITIONS = 6;
    private static final int REPLICATION_FACTOR = 3;
    private static final int BATCH_RECORDS = 100;
    private static final int KEYS_PER_PARTITION = 1_000;
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration READY_TIMEOUT = Duration.ofMinutes(2);
    /** Latency samples kept per phase; later batches are counted but not sampled. */
    private static final int MAX_SAMPLES = 1 << 20;

    private HttpBenchmark()
    {
    }

    public static void main(final String[] args)
    {
        BenchmarkRun.runAndExit("http", args, HttpBenchmark::measure);
    }

    private static void measure(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start("http", args);
        final int window = run.choose("in_flight_batches", 12, 12);
        final int warmupSeconds = run.choose("warmup_seconds_per_side", 2, 10);
        final int rounds = run.choose("rounds", 2, 4);
        final int roundSeconds = run.choose("seconds_per_side_per_round", 3, 15);
        final int mixedSeconds = run.choose("mixed_keys_seconds", 2, 15);
        run.param("brokers", BROKERS).param("partitions", PARTITIONS).param("replication_factor", REPLICATION_FACTOR)
            .param("batch_records", BATCH_RECORDS).param("exporter", "file").param("http", "HTTP/1.1 keep-alive");

        final Path dataDir = Files.createTempDirectory("sluice-http-bench");
        final List<Broker> brokers = new ArrayList<>();
        TransportClient transport = null;
        SbeBrokerClient direct = null;
        PolledClusterTopology topology = null;
        CompletableFuture<ConfigurableApplicationContext> gatewayStart = null;
        ConfigurableApplicationContext gateway = null;
        ExecutorService httpExecutor = null;
        try
        {
            final long startNs = System.nanoTime();
            final String brokerList = PortAllocator.loopbackBrokerList(BROKERS);
            final PartitionDistribution distribution = PartitionDistribution.of(brokerList, PARTITIONS, REPLICATION_FACTOR);
            final Map<String, ExporterConfig> exporters = Map.of("file", new ExporterConfig("file", "file",
                Map.of("path", dataDir.resolve("exports").resolve("file").toString())));
            // The gateway starts beside the brokers (it waits for them anyway): Spring's startup is the slow part.
            gatewayStart = startGateway(brokerList, dataDir);
            for (int b = 0; b < BROKERS; b++)
            {
                brokers.add(Broker.start(BrokerConfig.of(b, distribution, dataDir, exporters)));
            }
            gateway = gatewayStart.join();
            final int httpPort = ((WebServerApplicationContext)gateway).getWebServer().getPort();
            final URI recordsUri = URI.create("http://127.0.0.1:" + httpPort + "/v1/records");

            // The baseline: the gateway's broker client and leader tracking, without HTTP, JSON or Spring.
            transport = new TransportClient(TransportConfig.defaults());
            final PolledClusterTopology[] topologyRef = new PolledClusterTopology[1];
            direct = new SbeBrokerClient(transport, distribution, partitionId ->
                topologyRef[0] == null ? OptionalInt.empty() : topologyRef[0].leaderOf(partitionId), false);
            topology = new PolledClusterTopology(
                distribution, direct, PolledClusterTopology.DEFAULT_POLL_INTERVAL, PolledClusterTopology.DEFAULT_POLL_TIMEOUT);
            topologyRef[0] = topology;
            topology.start();

            httpExecutor = Executors.newFixedThreadPool(2, runnable ->
            {
                final Thread thread = new Thread(runnable, "bench-http-client");
                thread.setDaemon(true);
                return thread;
            });
            final HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .executor(httpExecutor)
                .build();

            final Workload workload = new Workload(new PartitionSelector(PARTITIONS));
            awaitReady(run, workload, direct, http, recordsUri);
            run.log("%d brokers, %d partitions (RF %d), gateway on port %d ready in %.1f s",
                BROKERS, PARTITIONS, REPLICATION_FACTOR, httpPort, (System.nanoTime() - startNs) / 1e9);

            final SbeBrokerClient directClient = direct;
            final Side directSide = new Side("direct", batch ->
            {
                final int partitionId = workload.partitionOf(batch);
                return directClient.append(partitionId, workload.records(partitionId), REQUEST_TIMEOUT)
                    .thenApply(appended -> appended.count() == BATCH_RECORDS && appended.partitionId() == partitionId);
            });
            final Side httpSide = new Side("http", batch ->
                post(http, recordsUri, workload.body(workload.partitionOf(batch))));
            final Side mixedSide = new Side("http mixed keys", batch ->
                post(http, recordsUri, workload.mixedBody(batch)));
            // Every request under its own Idempotency-Key, as a careful client sends it (issue 14).
            final String keyPrefix = "bench-" + System.nanoTime() + "-";
            final java.util.concurrent.atomic.AtomicLong keys = new java.util.concurrent.atomic.AtomicLong();
            final Side keyedSide = new Side("http idempotency keys", batch ->
                post(http, recordsUri, workload.body(workload.partitionOf(batch)), keyPrefix + keys.incrementAndGet()));

            directSide.drive(run, window, warmupSeconds, false);
            httpSide.drive(run, window, warmupSeconds, false);
            mixedSide.drive(run, window, Math.min(warmupSeconds, 2), false);
            keyedSide.drive(run, window, Math.min(warmupSeconds, 2), false);
            for (int round = 0; round < rounds; round++)
            {
                final boolean directFirst = round % 2 == 0;
                (directFirst ? directSide : httpSide).drive(run, window, roundSeconds, true);
                (directFirst ? httpSide : directSide).drive(run, window, roundSeconds, true);
                keyedSide.drive(run, window, roundSeconds, true);
            }
            mixedSide.drive(run, window, mixedSeconds, true);

            final double httpRate = httpSide.recordsPerSecond();
            final double directRate = directSide.recordsPerSecond();
            run.result("http_records_per_s", Math.round(httpRate))
                .result("direct_records_per_s", Math.round(directRate))
                .result("http_batch_p50_ms", httpSide.percentileMs(50))
                .result("http_batch_p99_ms", httpSide.percentileMs(99))
                .result("direct_batch_p50_ms", directSide.percentileMs(50))
                .result("direct_batch_p99_ms", directSide.percentileMs(99))
                .result("http_cpu_us_per_record", httpSide.cpuMicrosPerRecord())
                .result("direct_cpu_us_per_record", directSide.cpuMicrosPerRecord())
                .result("http_mixed_keys_records_per_s", Math.round(mixedSide.recordsPerSecond()))
                .result("http_mixed_keys_batch_p50_ms", mixedSide.percentileMs(50))
                .result("http_idempotency_keys_records_per_s", Math.round(keyedSide.recordsPerSecond()))
                .result("http_idempotency_keys_batch_p50_ms", keyedSide.percentileMs(50))
                .result("http_idempotency_keys_cpu_us_per_record", keyedSide.cpuMicrosPerRecord())
                .result("idempotency_keys_over_plain_http", keyedSide.recordsPerSecond() / httpRate)
                .result("failed_batches", httpSide.failed() + directSide.failed() + mixedSide.failed() + keyedSide.failed())
                .ratio(httpRate / directRate);
        }
        finally
        {
            if (gateway == null && gatewayStart != null)
            {
                // A broker failed to start: the gateway may still come up, and must go down with the rest.
                gateway = gatewayStart.handle((started, error) -> started).join();
            }
            if (gateway != null)
            {
                gateway.close();
            }
            if (topology != null)
            {
                topology.close();
            }
            if (direct != null)
            {
                direct.close();
            }
            if (transport != null)
            {
                transport.close();
            }
            if (httpExecutor != null)
            {
                httpExecutor.shutdownNow();
            }
            for (int i = brokers.size() - 1; i >= 0; i--)
            {
                brokers.get(i).close();
            }
            SluiceCluster.deleteRecursively(dataDir);
        }
        run.finish();
    }

    /** The gateway application on free ports (client and management), for the given brokers. */
    private static CompletableFuture<ConfigurableApplicationContext> startGateway(final String brokerList, final Path dataDir)
    {
        final CompletableFuture<ConfigurableApplicationContext> started = new CompletableFuture<>();
        final Thread starter = new Thread(() ->
        {
            try
            {
                started.complete(new SpringApplicationBuilder(GatewayApplication.class).run(
                    "--server.port=0",
                    "--management.server.port=0",
                    "--sluice.cluster.brokers=" + brokerList,
                    "--sluice.cluster.partitions=" + PARTITIONS,
                    "--sluice.cluster.replication-factor=" + REPLICATION_FACTOR,
                    "--sluice.data-dir=" + dataDir,
                    "--sluice.gateway.request-timeout=" + REQUEST_TIMEOUT.toSeconds() + "s"));
            }
            catch (final Throwable t)
            {
                started.completeExceptionally(t);
            }
        }, "bench-gateway-start");
        starter.start();
        return started;
    }

    private static CompletableFuture<Boolean> post(final HttpClient http, final URI uri, final byte[] body)
    {
        return post(http, uri, body, null);
    }

    /** With {@code idempotencyKey} null, no {@code Idempotency-Key} header. */
    private static CompletableFuture<Boolean> post(
        final HttpClient http, final URI uri, final byte[] body, final String idempotencyKey)
    {
        final HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
            .timeout(REQUEST_TIMEOUT.plusSeconds(5))
            .header("Content-Type", "application/json");
        if (idempotencyKey != null)
        {
            builder.header("Idempotency-Key", idempotencyKey);
        }
        final HttpRequest request = builder
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray()).thenApply(response -> response.statusCode() == 200);
    }

    /**
     * Waits until every partition takes one batch both ways, checking the HTTP answer in full once: 100
     * positions, all on the partition the keys were chosen for.
     */
    private static void awaitReady(
        final BenchmarkRun run,
        final Workload workload,
        final SbeBrokerClient direct,
        final HttpClient http,
        final URI uri) throws InterruptedException
    {
        final JsonMapper json = JsonMapper.builder().build();
        final long deadlineNs = System.nanoTime() + READY_TIMEOUT.toNanos();
        String lastFailure = "not tried";
        for (int partitionId = 1; partitionId <= PARTITIONS; partitionId++)
        {
            while (true)
            {
                try
                {
                    direct.append(partitionId, workload.records(partitionId), REQUEST_TIMEOUT).get();
                    final HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri)
                        .timeout(REQUEST_TIMEOUT.plusSeconds(5))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(workload.body(partitionId)))
                        .build(), HttpResponse.BodyHandlers.ofString());
                    if (response.statusCode() / 100 == 4)
                    {
                        throw new RefusedException("POST /v1/records refused the benchmark's request with " +
                            response.statusCode() + ": " + response.body());
                    }
                    if (response.statusCode() != 200)
                    {
                        throw new IllegalStateException("POST /v1/records answered " + response.statusCode() + ": " +
                            response.body());
                    }
                    final JsonNode positions = json.readTree(response.body());
                    if (positions.size() != BATCH_RECORDS)
                    {
                        throw new IllegalStateException("POST /v1/records answered " + positions.size() +
                            " positions for " + BATCH_RECORDS + " records");
                    }
                    for (final JsonNode position : positions)
                    {
                        if (position.get("partitionId").asInt() != partitionId)
                        {
                            throw new IllegalStateException("a record keyed for partition " + partitionId +
                                " landed on " + position);
                        }
                    }
                    break;
                }
                catch (final RefusedException e)
                {
                    throw e;
                }
                catch (final Exception e)
                {
                    lastFailure = "partition " + partitionId + ": " + e;
                    if (System.nanoTime() > deadlineNs)
                    {
                        throw new IllegalStateException("cluster not ready within " + READY_TIMEOUT.toSeconds() +
                            " s (" + lastFailure + ")", e);
                    }
                    Thread.sleep(250);
                }
            }
        }
        run.log("every partition took a batch directly and over HTTP");
    }

    /** A 4xx for the benchmark's own request: waiting will not help. */
    private static final class RefusedException extends IllegalStateException
    {
        private static final long serialVersionUID = 1L;

        RefusedException(final String message)
        {
            super(message);
        }
    }

    /** The records both sides send, built once: per partition 100 records keyed for it, as objects and as JSON. */
    private static final class Workload
    {
        private final List<List<RecordToAppend>> recordsByPartition = new ArrayList<>();
        private final List<byte[]> bodiesByPartition = new ArrayList<>();
        private final List<byte[]> mixedBodies = new ArrayList<>();

        Workload(final PartitionSelector selector)
        {
            final List<List<String>> keys = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++)
            {
                keys.add(new ArrayList<>());
            }
            final List<String> allKeys = new ArrayList<>();
            for (int n = 0; keys.stream().anyMatch(k -> k.size() < KEYS_PER_PARTITION); n++)
            {
                final String key = String.format(Locale.ROOT, "order-%07d", n);
                final List<String> forPartition = keys.get(selector.partitionFor(key) - 1);
                if (forPartition.size() < KEYS_PER_PARTITION)
                {
                    forPartition.add(key);
                }
                allKeys.add(key);
            }
            final long timestamp = System.currentTimeMillis();
            for (int p = 0; p < PARTITIONS; p++)
            {
                final List<RecordToAppend> records = new ArrayList<>();
                final StringBuilder body = new StringBuilder("[");
                for (int i = 0; i < BATCH_RECORDS; i++)
                {
                    final String key = keys.get(p).get(i * (KEYS_PER_PARTITION / BATCH_RECORDS));
                    final String payload = payload(i);
                    records.add(new RecordToAppend(key, timestamp, payload.getBytes(StandardCharsets.UTF_8)));
                    body.append(i == 0 ? "" : ",").append("{\"key\":\"").append(key).append("\",\"payload\":")
                        .append(payload).append('}');
                }
                recordsByPartition.add(List.copyOf(records));
                bodiesByPartition.add(body.append(']').toString().getBytes(StandardCharsets.UTF_8));
            }
            for (int b = 0; b < 16; b++)
            {
                final StringBuilder body = new StringBuilder("[");
                for (int i = 0; i < BATCH_RECORDS; i++)
                {
                    final String key = allKeys.get((b * BATCH_RECORDS + i) % allKeys.size());
                    body.append(i == 0 ? "" : ",").append("{\"key\":\"").append(key).append("\",\"payload\":")
                        .append(payload(i)).append('}');
                }
                mixedBodies.add(body.append(']').toString().getBytes(StandardCharsets.UTF_8));
            }
        }

        /** A JSON object of exactly 100 bytes. */
        private static String payload(final int i)
        {
            final String head = String.format(Locale.ROOT, "{\"item\":\"i-%03d\",\"amount\":%d,\"note\":\"", i, 1_000 + i * 37);
            return head + "x".repeat(100 - head.length() - 2) + "\"}";
        }

        int partitionOf(final long batch)
        {
            return (int)(batch % PARTITIONS) + 1;
        }

        List<RecordToAppend> records(final int partitionId)
        {
            return recordsByPartition.get(partitionId - 1);
        }

        byte[] body(final int partitionId)
        {
            return bodiesByPartition.get(partitionId - 1);
        }

        byte[] mixedBody(final long batch)
        {
            return mixedBodies.get((int)(batch % mixedBodies.size()));
        }
    }

    /** One way of writing: keeps W batches in flight, sums measured time, batches and latencies over its phases. */
    private static final class Side
    {
        private final String name;
        private final IntFunction<CompletableFuture<Boolean>> sendBatch;
        private final long[] latencyNs = new long[MAX_SAMPLES];
        private final AtomicInteger samples = new AtomicInteger();
        private final AtomicLong failed = new AtomicLong();
        private long committedBatches;
        private long elapsedNs;
        private long cpuNs;

        Side(final String name, final IntFunction<CompletableFuture<Boolean>> sendBatch)
        {
            this.name = name;
            this.sendBatch = sendBatch;
        }

        /** Drives for {@code seconds}; only a measured phase adds to the figures. Waits for stragglers after. */
        void drive(final BenchmarkRun run, final int window, final int seconds, final boolean measured)
            throws InterruptedException
        {
            final Semaphore inFlight = new Semaphore(window);
            final AtomicLong committed = new AtomicLong();
            final AtomicLong failedHere = new AtomicLong();
            final long cpuStartNs = Stats.processCpuNs();
            final long startNs = System.nanoTime();
            final long endNs = startNs + TimeUnit.SECONDS.toNanos(seconds);
            int batch = 0;
            while (System.nanoTime() < endNs)
            {
                if (!inFlight.tryAcquire(10, TimeUnit.MILLISECONDS))
                {
                    continue;
                }
                final long sentNs = System.nanoTime();
                CompletableFuture<Boolean> answer;
                try
                {
                    answer = sendBatch.apply(batch++);
                }
                catch (final RuntimeException e)
                {
                    answer = CompletableFuture.failedFuture(e);
                }
                answer.whenComplete((ok, error) ->
                {
                    final long answeredNs = System.nanoTime();
                    // Only batches answered inside the phase count, so the rate is what the phase sustained.
                    if (error == null && ok && answeredNs <= endNs)
                    {
                        committed.incrementAndGet();
                        if (measured)
                        {
                            final int slot = samples.getAndIncrement();
                            if (slot < MAX_SAMPLES)
                            {
                                latencyNs[slot] = answeredNs - sentNs;
                            }
                        }
                    }
                    else if (error != null || !ok)
                    {
                        failedHere.incrementAndGet();
                    }
                    inFlight.release();
                });
            }
            final long phaseNs = System.nanoTime() - startNs;
            final long phaseCpuNs = Stats.processCpuNs() - cpuStartNs;
            final long phaseBatches = committed.get();
            if (!inFlight.tryAcquire(window, REQUEST_TIMEOUT.toSeconds() * 2, TimeUnit.SECONDS))
            {
                throw new IllegalStateException(name + ": batches still unanswered " + REQUEST_TIMEOUT.toSeconds() * 2 +
                    " s after the phase ended");
            }
            if (measured)
            {
                committedBatches += phaseBatches;
                elapsedNs += phaseNs;
                cpuNs += phaseCpuNs;
                failed.addAndGet(failedHere.get());
            }
            run.log("%s%s: %.0f records/s (%d batches in %.1f s, %d failed)", name, measured ? "" : " warmup",
                Stats.perSecond(phaseBatches * BATCH_RECORDS, phaseNs), phaseBatches, phaseNs / 1e9, failedHere.get());
        }

        double recordsPerSecond()
        {
            return Stats.perSecond(committedBatches * BATCH_RECORDS, elapsedNs);
        }

        double percentileMs(final double p)
        {
            final int count = Math.min(samples.get(), MAX_SAMPLES);
            final long[] taken = new long[count];
            System.arraycopy(latencyNs, 0, taken, 0, count);
            return Stats.percentile(taken, p) / 1e6;
        }

        /** CPU of the whole JVM (brokers included) per committed record. */
        double cpuMicrosPerRecord()
        {
            return cpuNs / 1e3 / Math.max(1, committedBatches * BATCH_RECORDS);
        }

        long failed()
        {
            return failed.get();
        }
    }

}
