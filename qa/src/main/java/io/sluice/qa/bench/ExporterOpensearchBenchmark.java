package io.sluice.qa.bench;

import com.fasterxml.jackson.databind.util.RawValue;
import io.sluice.broker.Broker;
import io.sluice.broker.BrokerConfig;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.exporter.opensearch.IndexTemplate;
import io.sluice.exporter.opensearch.OpenSearchExporter;
import io.sluice.exporter.opensearch.OpenSearchExporterConfig;
import io.sluice.exporter.opensearch.testing.OpenSearchNode;
import io.sluice.gateway.broker.AdminOperation;
import io.sluice.gateway.broker.AdminResult;
import io.sluice.gateway.broker.RecordToAppend;
import io.sluice.gateway.broker.SbeBrokerClient;
import io.sluice.protocol.cluster.ExporterStatus;
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
 * Sluice side: one in-process broker with one partition (RF 1) and an {@code opensearch} exporter. Per segment,
 * exporting is paused, 10,000 records of 100-byte payloads are appended, then exporting is resumed; the time runs
 * from the resume's answer to the exporter acknowledging the last position (every bulk up to it confirmed).
 * Direct side: the same documents (the same JSON, ids and index template, into an index of its own), prepared
 * beforehand, sent in sequential bulks of the same size, one in flight like the exporter of one partition; the
 * time is that of the bulks. Segments alternate which side goes first, each after a quiet moment; records/s are
 * over all segments' time, and the ratio is the median of the segments' sluice / direct ratios (the load of this
 * shared machine drifts within seconds, which a median of side-by-side pairs resists). The exporter's own counters
 * say how much of its time went into bulk calls.
 */
public final class ExporterOpensearchBenchmark
{
    private static final int PARTITION = 1;
    private static final int PAYLOAD_BYTES = 100;
    private static final int BULK_RECORDS = 1_000;
    private static final int APPEND_BATCH = 500;
    private static final int SEGMENT_RECORDS = 10_000;
    /**
     * Quiet time before each timed side: after a Sluice segment the broker replicates the acknowledged positions
     * and snapshots and compacts its log, and after the appends Ratis still flushes; without this pause that
     * background work lands on whichever side is timed next (it made the direct side look 2x slower).
     */
    private static final long SETTLE_MS = 1_500;
    private static final long TIMESTAMP = 1_764_420_000_000L;
    private static final String SLUICE_INDEX = "bench-sluice";
    private static final String DIRECT_INDEX = "bench-direct";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private ExporterOpensearchBenchmark()
    {
    }

    public static void main(final String[] args)
    {
        BenchmarkRun.runAndExit("exporter-opensearch", args, ExporterOpensearchBenchmark::measure);
    }

    private static void measure(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start("exporter-opensearch", args);
        final int segments = run.choose("segments_per_side", 2, 8);
        run.param("records_per_segment", SEGMENT_RECORDS).param("payload_bytes", PAYLOAD_BYTES)
            .param("bulk_max_records", BULK_RECORDS).param("partitions", 1)
            .param("opensearch", "2.19.6 single node in the benchmark JVM")
            .param("client", "opensearch-java 3.3.0, ApacheHttpClient5Transport");

        final Path dir = Files.createTempDirectory("sluice-opensearch-bench");
        OpenSearchNode node = null;
        Broker broker = null;
        TransportClient transport = null;
        SbeBrokerClient client = null;
        ApacheHttpClient5Transport directTransport = null;
        try
        {
            node = OpenSearchNode.start(dir.resolve("opensearch"));
            final String brokerList = PortAllocator.loopbackBrokerList(1);
            final PartitionDistribution distribution = PartitionDistribution.of(brokerList, 1, 1);
            broker = Broker.start(BrokerConfig.of(0, distribution, dir.resolve("broker"), exporters(node, SLUICE_INDEX)));
            transport = new TransportClient(TransportConfig.defaults());
            client = new SbeBrokerClient(transport, distribution, partitionId -> OptionalInt.of(0), false);
            createIndex(node, SLUICE_INDEX);
            createIndex(node, DIRECT_INDEX);
            // One client for the whole run, as an exporter keeps one for its whole leadership.
            directTransport = OpenSearchExporter.newTransport(OpenSearchExporterConfig.parse(Map.of("url", node.url(),
                "index", DIRECT_INDEX, "bulk.max-records", Integer.toString(BULK_RECORDS))));
            final OpenSearchClient directClient = new OpenSearchClient(directTransport);

            // Warm-up of both sides (JIT, first segments, connections), not counted.
            final Side sluice = new Side();
            final Side direct = new Side();
            long version = 1;
            long position = 0;
            final Side ignored = new Side();
            sluiceSegment(client, broker, position, version, ignored);
            directSegment(directClient, position, ignored);
            position += SEGMENT_RECORDS;
            version += 2;

            // Short segments, alternating which side goes first, so drifts of this shared machine's load hit both.
            final double[] ratios = new double[segments];
            for (int segment = 0; segment < segments; segment++)
            {
                final Side sluiceHere = new Side();
                final Side directHere = new Side();
                if (segment % 2 == 0)
                {
                    directSegment(directClient, position, directHere);
                    sluiceSegment(client, broker, position, version, sluiceHere);
                }
                else
                {
                    sluiceSegment(client, broker, position, version, sluiceHere);
                    directSegment(directClient, position, directHere);
                }
                position += SEGMENT_RECORDS;
                version += 2;
                ratios[segment] = sluiceHere.perSecond() / directHere.perSecond();
                run.log("segment %d: sluice %,.0f records/s (%.0f%% of it in bulk calls, %.1f ms a bulk), direct %,.0f " +
                    "records/s (%.1f ms a bulk)", segment + 1, sluiceHere.perSecond(), 100 * sluiceHere.bulkShare(),
                    sluiceHere.bulkMs(), directHere.perSecond(), directHere.bulkMs());
                sluice.add(sluiceHere);
                direct.add(directHere);
            }
            final long sluiceDocuments = node.count(SLUICE_INDEX);
            final long directDocuments = node.count(DIRECT_INDEX);
            if (sluiceDocuments != (long)(segments + 1) * SEGMENT_RECORDS ||
                directDocuments != (long)(segments + 1) * SEGMENT_RECORDS)
            {
                throw new IllegalStateException("indexes hold " + sluiceDocuments + " and " + directDocuments +
                    " documents, expected " + (segments + 1) * SEGMENT_RECORDS + " each");
            }
            run.result("sluice_records_per_s", Math.round(sluice.perSecond()))
                .result("direct_records_per_s", Math.round(direct.perSecond()))
                .result("sluice_bulk_ms_mean", sluice.bulkMs())
                .result("direct_bulk_ms_mean", direct.bulkMs())
                .result("sluice_time_in_bulk_calls_fraction", sluice.bulkShare())
                .result("ratio_over_total_time", sluice.perSecond() / direct.perSecond())
                .ratio(Stats.median(ratios));
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
            if (directTransport != null)
            {
                directTransport.close();
            }
            if (broker != null)
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

    /** Records, elapsed time, and bulk calls with their time, summed over segments. */
    private static final class Side
    {
        long records;
        long elapsedNs;
        long bulks;
        long bulkNs;

        void add(final Side other)
        {
            records += other.records;
            elapsedNs += other.elapsedNs;
            bulks += other.bulks;
            bulkNs += other.bulkNs;
        }

        double perSecond()
        {
            return Stats.perSecond(records, elapsedNs);
        }

        double bulkMs()
        {
            return bulks == 0 ? 0 : bulkNs / 1e6 / bulks;
        }

        double bulkShare()
        {
            return elapsedNs == 0 ? 0 : (double)bulkNs / elapsedNs;
        }
    }

    private static Map<String, ExporterConfig> exporters(final OpenSearchNode node, final String index)
    {
        return Map.of("search", new ExporterConfig("search", OpenSearchExporter.TYPE, Map.of(
            "url", node.url(), "index", index, "bulk.max-records", Integer.toString(BULK_RECORDS),
            "retry.max-backoff", "1s")));
    }

    /**
     * Pauses, appends a segment (positions {@code first + 1 ..}), resumes, and times from the resume's answer to
     * the exporter acknowledging the segment's last position.
     */
    private static void sluiceSegment(
        final SbeBrokerClient client, final Broker broker, final long first, final long version, final Side side)
        throws Exception
    {
        final PartitionReplica replica = new PartitionReplica(0, PARTITION);
        awaitAdmin(client, replica, AdminRequestKind.PAUSE_EXPORTING, version, ExportingState.PAUSED);
        final List<CompletableFuture<?>> appends = new ArrayList<>();
        long lastPosition = 0;
        for (int from = 0; from < SEGMENT_RECORDS; from += APPEND_BATCH)
        {
            final List<RecordToAppend> batch = new ArrayList<>(APPEND_BATCH);
            for (int i = from; i < Math.min(SEGMENT_RECORDS, from + APPEND_BATCH); i++)
            {
                batch.add(new RecordToAppend(key(first + i + 1), TIMESTAMP, payload(first + i + 1)));
            }
            appends.add(client.append(PARTITION, batch, TIMEOUT));
        }
        for (final CompletableFuture<?> append : appends)
        {
            lastPosition = Math.max(lastPosition, last(append));
        }
        if (lastPosition != first + SEGMENT_RECORDS)
        {
            throw new IllegalStateException("segment ends at position " + lastPosition + ", expected " +
                (first + SEGMENT_RECORDS));
        }
        Thread.sleep(SETTLE_MS);
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
            System.out.printf("exporter failed %d times in a segment (%s)%n", after.failures() - before.failures(),
                after.lastError());
        }
        side.records += SEGMENT_RECORDS;
        side.elapsedNs += elapsedNs;
        side.bulks += after.sinkWrites() - before.sinkWrites();
        side.bulkNs += after.sinkWriteNanos() - before.sinkWriteNanos();
    }

    /**
     * Sends the same documents a segment of the Sluice side has (positions {@code first + 1 ..}: the same JSON,
     * ids and template), prepared beforehand, in sequential bulks of the same size; times the bulks.
     */
    private static void directSegment(final OpenSearchClient client, final long first, final Side side) throws Exception
    {
        final List<List<BulkOperation>> bulks = new ArrayList<>();
        for (int from = 0; from < SEGMENT_RECORDS; from += BULK_RECORDS)
        {
            final List<BulkOperation> operations = new ArrayList<>(BULK_RECORDS);
            for (int i = from; i < Math.min(SEGMENT_RECORDS, from + BULK_RECORDS); i++)
            {
                final long position = first + i + 1;
                final String source = "{\"partitionId\":" + PARTITION + ",\"position\":" + position +
                    ",\"key\":\"" + key(position) + "\",\"timestamp\":" + TIMESTAMP + ",\"payload\":" +
                    new String(payload(position), StandardCharsets.UTF_8) + "}";
                final String id = PARTITION + "-" + position;
                operations.add(BulkOperation.of(o -> o.index(x -> x.index(DIRECT_INDEX).id(id)
                    .document(new RawValue(source)))));
            }
            bulks.add(operations);
        }
        Thread.sleep(SETTLE_MS);
        final long startNs = System.nanoTime();
        for (final List<BulkOperation> operations : bulks)
        {
            final BulkResponse response = client.bulk(b -> b.operations(operations));
            if (response.errors())
            {
                throw new IllegalStateException("direct bulk had errors: " +
                    response.items().stream().filter(item -> item.error() != null).findFirst().orElseThrow().error());
            }
        }
        final long elapsedNs = System.nanoTime() - startNs;
        side.records += SEGMENT_RECORDS;
        side.elapsedNs += elapsedNs;
        side.bulks += bulks.size();
        side.bulkNs += elapsedNs;
    }

    private static String key(final long position)
    {
        return "key-" + position;
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
    static byte[] payload(final long i)
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
        return statuses.isEmpty() ? new ExporterStatus("search", OpenSearchExporter.TYPE, -1, false, null, 0, 0, 0, 0) :
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
                final AdminResult result = client.admin(replica,
                        AdminOperation.ofPartition(kind, version, true, replica.partitionId()), TIMEOUT)
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
