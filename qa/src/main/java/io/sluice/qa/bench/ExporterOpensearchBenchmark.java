package io.sluice.qa.bench;

import com.fasterxml.jackson.databind.util.RawValue;
import io.sluice.broker.Broker;
import io.sluice.broker.BrokerConfig;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.partition.ExporterStatus;
import io.sluice.exporter.opensearch.IndexTemplate;
import io.sluice.exporter.opensearch.OpenSearchExporter;
import io.sluice.exporter.opensearch.OpenSearchExporterConfig;
import io.sluice.exporter.opensearch.testing.OpenSearchNode;
import io.sluice.gateway.broker.AdminResult;
import io.sluice.gateway.broker.RecordToAppend;
import io.sluice.gateway.broker.SbeBrokerClient;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import io.sluice.qa.cluster.PortAllocator;
import io.sluice.qa.cluster.SluiceCluster;
import org.opensearch.client.opensearch.OpenSearchClient;
import org.opensearch.client.opensearch.core.BulkResponse;
import org.opensearch.client.opensearch.core.bulk.BulkOperation;
import org.opensearch.client.transport.httpclient5.ApacheHttpClient5Transport;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Records/s exported by Sluice into a real OpenSearch node (in this JVM, 127.0.0.1) against the same documents
 * bulk-indexed straight into it with the same client, transport and bulk size, in the same run.
 * <p>
 * Sluice side: one in-process broker with one partition (RF 1) and an {@code opensearch} exporter. Exporting is
 * paused, N records of 100-byte payloads are appended, then exporting is resumed; the figure is N over the time
 * from the resume's answer to the exporter acknowledging the last position (every bulk up to it confirmed).
 * Direct side: the same N documents (the same JSON, ids and index template), prepared beforehand, sent in
 * sequential bulks of the same size, one in flight like the exporter of one partition; the figure is N over the
 * time of those bulks. Ratio = sluice / direct. Each round creates both sides' indexes first, lets the new
 * broker settle, and alternates which side goes first; the figures are medians over the rounds.
 */
public final class ExporterOpensearchBenchmark
{
    private static final int PARTITION = 1;
    private static final int PAYLOAD_BYTES = 100;
    private static final int BULK_RECORDS = 1_000;
    private static final int APPEND_BATCH = 500;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private ExporterOpensearchBenchmark()
    {
    }

    public static void main(final String[] args)
    {
        try
        {
            measure(args);
        }
        catch (final Throwable e)
        {
            System.err.println("exporter-opensearch benchmark failed: " + e);
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0); // Ratis and OpenSearch leave non-daemon threads behind
    }

    private static void measure(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start("exporter-opensearch", args);
        final int records = run.choose("records", 20_000, 50_000);
        final int rounds = run.choose("rounds", 1, 4);
        run.param("payload_bytes", PAYLOAD_BYTES).param("bulk_max_records", BULK_RECORDS).param("partitions", 1)
            .param("opensearch", "2.19.6 single node in the benchmark JVM").param("client", "opensearch-java 3.3.0, ApacheHttpClient5Transport");

        final Path dir = Files.createTempDirectory("sluice-opensearch-bench");
        OpenSearchNode node = null;
        final List<Broker> brokers = new ArrayList<>();
        TransportClient transport = null;
        SbeBrokerClient client = null;
        try
        {
            node = OpenSearchNode.start(dir.resolve("opensearch"));
            final double[] sluice = new double[rounds];
            final double[] direct = new double[rounds];
            final double[] bulkShare = new double[rounds];
            final double[] sluiceBulkMs = new double[rounds];
            final double[] directBulkMs = new double[rounds];
            final String brokerList = PortAllocator.loopbackBrokerList(1);
            final PartitionDistribution distribution = PartitionDistribution.of(brokerList, 1, 1);
            transport = new TransportClient(TransportConfig.defaults());
            client = new SbeBrokerClient(transport, distribution, partitionId -> OptionalInt.of(0), false);

            // warm-up of both sides (JIT, the node's first index creation)
            final String warmIndex = "bench-warmup";
            final Broker warm = Broker.start(BrokerConfig.of(0, distribution, dir.resolve("warm"), exporters(node, warmIndex)));
            brokers.add(warm);
            sluiceSide(run, client, warm, Math.min(records, 10_000), 1, "warm-up");
            warm.close();
            brokers.remove(warm);
            directSide(run, node, "bench-direct-warmup", Math.min(records, 10_000));

            long version = 10;
            for (int round = 0; round < rounds; round++)
            {
                final String index = "bench-sluice-" + round;
                final Broker broker = Broker.start(BrokerConfig.of(0, distribution, dir.resolve("broker-" + round),
                    exporters(node, index)));
                brokers.add(broker);
                // Both indexes exist before either side is timed, and the new broker has settled: otherwise the
                // side that runs first pays for index creation and the broker's startup.
                createIndex(node, index);
                createIndex(node, "bench-direct-" + round);
                Thread.sleep(3_000);
                final double[] directFigures;
                final double[] sluiceFigures;
                if (round % 2 == 0)
                {
                    directFigures = directSide(run, node, "bench-direct-" + round, records);
                    sluiceFigures = sluiceSide(run, client, broker, records, version, index);
                }
                else
                {
                    sluiceFigures = sluiceSide(run, client, broker, records, version, index);
                    directFigures = directSide(run, node, "bench-direct-" + round, records);
                }
                version += 10;
                broker.close();
                brokers.remove(broker);
                final long indexed = node.count(index);
                if (indexed != records)
                {
                    throw new IllegalStateException("index " + index + " holds " + indexed + " documents, expected " + records);
                }
                sluice[round] = sluiceFigures[0];
                bulkShare[round] = sluiceFigures[1];
                sluiceBulkMs[round] = sluiceFigures[2];
                direct[round] = directFigures[0];
                directBulkMs[round] = directFigures[1];
                run.log("round %d: sluice %,.0f records/s (%.0f%% of the time in bulk calls, %.1f ms a bulk), " +
                    "direct %,.0f records/s (%.1f ms a bulk)", round + 1, sluice[round], 100 * bulkShare[round],
                    sluiceBulkMs[round], direct[round], directBulkMs[round]);
            }
            final double sluiceRate = Stats.median(sluice);
            final double directRate = Stats.median(direct);
            run.result("sluice_records_per_s", Math.round(sluiceRate))
                .result("direct_records_per_s", Math.round(directRate))
                .result("sluice_bulk_ms_mean", Stats.median(sluiceBulkMs))
                .result("direct_bulk_ms_mean", Stats.median(directBulkMs))
                .result("sluice_time_in_bulk_calls_fraction", Stats.median(bulkShare))
                .ratio(sluiceRate / directRate);
        }
        finally
        {
            if (client != null)
            {
                client.close();
            }
            if (transport != null)
            {
                transport.close();
            }
            for (final Broker broker : brokers)
            {
                broker.close();
            }
            if (node != null)
            {
                node.close();
            }
            SluiceCluster.deleteRecursively(dir);
        }
        run.finish();
    }

    private static Map<String, ExporterConfig> exporters(final OpenSearchNode node, final String index)
    {
        return Map.of("search", new ExporterConfig("search", OpenSearchExporter.TYPE, Map.of(
            "url", node.url(), "index", index, "bulk.max-records", Integer.toString(BULK_RECORDS),
            "retry.max-backoff", "1s")));
    }

    /**
     * Pauses, appends {@code records}, resumes and waits for the exporter to acknowledge the last position.
     * Returns records/s, the share of that time spent in bulk calls, and the mean bulk call in ms.
     */
    private static double[] sluiceSide(
        final BenchmarkRun run, final SbeBrokerClient client, final Broker broker, final int records, final long version,
        final String index) throws Exception
    {
        final PartitionReplica replica = new PartitionReplica(0, PARTITION);
        awaitAdmin(client, replica, AdminRequestKind.PAUSE_EXPORTING, version, ExportingState.PAUSED);
        final List<CompletableFuture<?>> appends = new ArrayList<>();
        long lastPosition = 0;
        for (int from = 0; from < records; from += APPEND_BATCH)
        {
            final List<RecordToAppend> batch = new ArrayList<>(APPEND_BATCH);
            for (int i = from; i < Math.min(records, from + APPEND_BATCH); i++)
            {
                batch.add(new RecordToAppend("key-" + i, System.currentTimeMillis(), payload(i)));
            }
            appends.add(client.append(PARTITION, batch, TIMEOUT));
            if (appends.size() >= 8)
            {
                lastPosition = Math.max(lastPosition, last(appends.remove(0)));
            }
        }
        for (final CompletableFuture<?> append : appends)
        {
            lastPosition = Math.max(lastPosition, last(append));
        }
        final ExporterStatus before = status(broker);
        awaitAdmin(client, replica, AdminRequestKind.RESUME_EXPORTING, version + 1, ExportingState.EXPORTING);
        final long startNs = System.nanoTime();
        final long deadlineNs = startNs + TimeUnit.MINUTES.toNanos(5);
        while (status(broker).acknowledgedPosition() < lastPosition)
        {
            if (System.nanoTime() > deadlineNs)
            {
                throw new IllegalStateException("exporter did not acknowledge " + lastPosition + " in 5 minutes: " +
                    status(broker));
            }
            Thread.sleep(1);
        }
        final long elapsedNs = System.nanoTime() - startNs;
        final ExporterStatus after = status(broker);
        if (after.failures() > before.failures())
        {
            run.log("%s: %d failed attempts (%s)", index, after.failures() - before.failures(), after.lastError());
        }
        final long bulks = after.sinkWrites() - before.sinkWrites();
        final long bulkNs = after.sinkWriteNanos() - before.sinkWriteNanos();
        return new double[] {Stats.perSecond(records, elapsedNs), (double)bulkNs / elapsedNs,
            bulks == 0 ? 0 : bulkNs / 1e6 / bulks};
    }

    /** Sends the same documents straight to the node: returns records/s and the mean bulk call in ms. */
    private static double[] directSide(final BenchmarkRun run, final OpenSearchNode node, final String index,
                                       final int records) throws Exception
    {
        final OpenSearchExporterConfig config = OpenSearchExporterConfig.parse(Map.of("url", node.url(), "index", index,
            "bulk.max-records", Integer.toString(BULK_RECORDS)));
        try (ApacheHttpClient5Transport transport = OpenSearchExporter.newTransport(config))
        {
            final OpenSearchClient client = new OpenSearchClient(transport);
            IndexTemplate.put(client, index); // idempotent: the round created the index with it already
            final long timestamp = System.currentTimeMillis();
            final List<List<BulkOperation>> bulks = new ArrayList<>();
            for (int from = 0; from < records; from += BULK_RECORDS)
            {
                final List<BulkOperation> operations = new ArrayList<>(BULK_RECORDS);
                for (int i = from; i < Math.min(records, from + BULK_RECORDS); i++)
                {
                    final long position = i + 1;
                    final String source = "{\"partitionId\":" + PARTITION + ",\"position\":" + position +
                        ",\"key\":\"key-" + i + "\",\"timestamp\":" + timestamp + ",\"payload\":" +
                        new String(payload(i), StandardCharsets.UTF_8) + "}";
                    final String id = PARTITION + "-" + position;
                    operations.add(BulkOperation.of(o -> o.index(x -> x.index(index).id(id).document(new RawValue(source)))));
                }
                bulks.add(operations);
            }
            final long startNs = System.nanoTime();
            for (final List<BulkOperation> operations : bulks)
            {
                final BulkResponse response = client.bulk(b -> b.operations(operations));
                if (response.errors())
                {
                    throw new IllegalStateException("direct bulk into " + index + " had errors: " +
                        response.items().stream().filter(item -> item.error() != null).findFirst().orElseThrow().error());
                }
            }
            final long elapsedNs = System.nanoTime() - startNs;
            final long indexed = node.count(index);
            if (indexed != records)
            {
                throw new IllegalStateException("index " + index + " holds " + indexed + " documents, expected " + records);
            }
            return new double[] {Stats.perSecond(records, elapsedNs), elapsedNs / 1e6 / bulks.size()};
        }
    }

    private static void createIndex(final OpenSearchNode node, final String index) throws Exception
    {
        final OpenSearchExporterConfig config = OpenSearchExporterConfig.parse(Map.of("url", node.url()));
        try (ApacheHttpClient5Transport transport = OpenSearchExporter.newTransport(config))
        {
            final OpenSearchClient client = new OpenSearchClient(transport);
            IndexTemplate.put(client, index);
            client.indices().create(c -> c.index(index));
        }
        node.request("GET", "/_cluster/health/" + index + "?wait_for_status=yellow&timeout=30s", null);
    }

    /** A JSON payload of exactly {@value #PAYLOAD_BYTES} bytes. */
    static byte[] payload(final int i)
    {
        final String head = "{\"seq\":" + i + ",\"text\":\"";
        final StringBuilder json = new StringBuilder(head);
        while (json.length() < PAYLOAD_BYTES - 2)
        {
            json.append('x');
        }
        return json.append("\"}").toString().getBytes(StandardCharsets.UTF_8);
    }

    private static long last(final CompletableFuture<?> append) throws Exception
    {
        final io.sluice.gateway.broker.AppendResult result =
            (io.sluice.gateway.broker.AppendResult)append.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        return result.firstPosition() + result.count() - 1;
    }

    private static ExporterStatus status(final Broker broker)
    {
        final List<ExporterStatus> statuses = broker.partition(PARTITION).director().exporterStatuses();
        return statuses.isEmpty() ? new ExporterStatus("search", OpenSearchExporter.TYPE, -1, false, null, 0) :
            statuses.get(0);
    }

    private static void awaitAdmin(final SbeBrokerClient client, final PartitionReplica replica,
                                   final AdminRequestKind kind, final long version, final ExportingState expected)
        throws InterruptedException
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (true)
        {
            try
            {
                final AdminResult result = client.admin(replica, kind, version, true, TIMEOUT)
                    .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                if (result.state() == expected)
                {
                    return;
                }
            }
            catch (final Exception e)
            {
                if (System.nanoTime() > deadlineNs)
                {
                    throw new IllegalStateException(kind + " not answered within 2 minutes", e);
                }
            }
            if (System.nanoTime() > deadlineNs)
            {
                throw new IllegalStateException(kind + " did not reach " + expected + " within 2 minutes");
            }
            Thread.sleep(100);
        }
    }
}
