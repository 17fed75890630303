package io.sluice.qa.opensearch;

import io.sluice.exporter.opensearch.testing.OpenSearchNode;
import io.sluice.qa.Exporting;
import io.sluice.qa.LongRunning;
import io.sluice.qa.QaClassOrder;
import io.sluice.qa.Records;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.GatewayException;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.RecordToWrite;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.ResourceLock;
import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 12: the OpenSearch exporter on a cluster of separate JVMs (3 brokers, 3 partitions, RF 3) exporting into a
 * real OpenSearch node in this JVM. One cluster and one index serve every case, in order; each case checks the
 * records it wrote and that the whole index still has no gap (an index holds no duplicate id by construction:
 * every document's id is its record's partition and position, which is checked too).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@ResourceLock(QaClassOrder.EMBEDDED_SINKS)
@LongRunning(seconds = 70)
class OpenSearchExportIT
{
    private static final String EXPORTER = "search";
    private static final String INDEX = "sluice-qa";
    private static final Duration EXPORT_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(120));
    /** Far longer than bulk.max-delay and a few retries, so a document that could arrive would have. */
    private static final Duration QUIET_PERIOD = Duration.ofSeconds(4);

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    private OpenSearchNode node;
    private SearchIndex index;
    private SluiceCluster cluster;
    /** Every acknowledged record so far: all of them must be in the index after each case. */
    private final List<WrittenRecord> allWritten = Collections.synchronizedList(new ArrayList<>());

    @BeforeAll
    void start() throws Exception
    {
        node = OpenSearchNode.start(RUN.directory().resolve("opensearch"));
        index = new SearchIndex(node, INDEX);
        cluster = RUN.cluster("cluster", builder -> builder.brokers(3).partitions(3).replicationFactor(3)
            .requestTimeout(Duration.ofSeconds(4))
            .property("sluice.exporters." + EXPORTER + ".type", "opensearch")
            .property("sluice.exporters." + EXPORTER + ".url", node.url())
            .property("sluice.exporters." + EXPORTER + ".index", INDEX)
            .property("sluice.exporters." + EXPORTER + ".bulk.max-delay", "200ms")
            .property("sluice.exporters." + EXPORTER + ".retry.max-backoff", "2s"));
        cluster.start();
        cluster.awaitReady();
        cluster.awaitPreferredLeaders(); // backfill starts ask each partition's leader
    }

    @AfterAll
    void stop() throws Exception
    {
        if (node != null)
        {
            node.close();
        }
    }

    @BeforeEach
    void everyBrokerUpAndExporting() throws Exception
    {
        node.start(); // no-op when running
        Exporting.everyBrokerUpAndExporting(cluster);
    }

    @Test
    @Order(1)
    void tenThousandRecordsBecomeExactlyTenThousandDocumentsWithTheirIdsAndFields()
    {
        final List<WrittenRecord> written = Records.writeInBatches(cluster, 10_000, 100,
            i -> new RecordToWrite("order-" + i, "{\"seq\":" + i + ",\"text\":\"record " + i + "\"}"));
        allWritten.addAll(written);
        final long started = System.nanoTime();
        index.awaitDocuments(written, EXPORT_TIMEOUT);
        cluster.log("10,000 records in the index " + Duration.ofNanos(System.nanoTime() - started).toMillis() +
            " ms after the last was acknowledged");

        final List<SearchIndex.Document> documents = index.assertHoldsWithoutGaps(written);
        assertThat(documents).hasSize(10_000);
        assertThat(index.count()).isEqualTo(10_000);
        final JsonNode view = awaitView(v -> everyPartition(v, "EXPORTING"));
        assertThat(view.path("exporters").get(0).path("type").asString()).isEqualTo("opensearch");
    }

    @Test
    @Order(2)
    void afterA200ForAPauseTheIndexGainsNothingUntilResumeBringsEveryRecord()
    {
        final List<WrittenRecord> before = Records.write(cluster, "before-pause", 60);
        allWritten.addAll(before);
        index.awaitDocuments(before, EXPORT_TIMEOUT);
        final HttpAnswer pause = cluster.client().pause().http();
        assertThat(pause.status()).as("pause: %s", pause).isEqualTo(200);
        final long countAtPause = index.count();

        final List<WrittenRecord> paused = Records.write(cluster, "while-paused", 600);
        allWritten.addAll(paused);
        Await.quietPeriod("paused: nothing may be indexed", QUIET_PERIOD);
        assertThat(index.count()).as("documents while paused").isEqualTo(countAtPause);
        assertThat(awaitView(v -> everyPartition(v, "PAUSED"))).isNotNull();

        Exporting.resumeAndAwaitExporting(cluster);
        index.awaitDocuments(paused, EXPORT_TIMEOUT);
        index.assertHoldsWithoutGaps(allWritten);
    }

    @Test
    @Order(3)
    void aSoftPauseKeepsIndexingButAcknowledgesNothingUntilResume()
    {
        final List<WrittenRecord> before = Records.write(cluster, "before-soft-pause", 60);
        allWritten.addAll(before);
        index.awaitDocuments(before, EXPORT_TIMEOUT);
        final HttpAnswer softPause = cluster.client().softPause().http();
        assertThat(softPause.status()).as("soft pause: %s", softPause).isEqualTo(200);
        final JsonNode atSoftPause = awaitView(v -> everyPartition(v, "SOFT_PAUSED"));

        final List<WrittenRecord> softPaused = Records.write(cluster, "while-soft-paused", 300);
        allWritten.addAll(softPaused);
        index.awaitDocuments(softPaused, EXPORT_TIMEOUT);
        Await.quietPeriod("a few acknowledgement intervals: the soft pause must hold the positions", Duration.ofSeconds(2));
        final JsonNode later = awaitView(v -> everyPartition(v, "SOFT_PAUSED"));
        // The sink has the documents, but no position moved past them in the replicated state (what compaction
        // and a new leader go by).
        final io.sluice.qa.cluster.ExportingStatus exporting = cluster.client().exporting();
        Records.highestPositions(softPaused).forEach((partitionId, lastWritten) ->
            assertThat(exporting.leaderOf(partitionId).flatMap(leader -> exporting.pair(leader, partitionId))
                .orElseThrow().exportedPosition()).as("replicated position of partition %d", partitionId)
                .isLessThan(lastWritten));
        cluster.log("soft paused: " + atSoftPause + " then " + later);

        Exporting.resumeAndAwaitExporting(cluster);
        Exporting.awaitAcknowledged(cluster, Records.highestPositions(softPaused));
        index.assertHoldsWithoutGaps(allWritten);
    }

    @Test
    @Order(4)
    void resetToLatestAndBackfillFillsTheIndexWithoutGapOrDuplicate()
    {
        final List<WrittenRecord> before = Records.write(cluster, "before-reset", 30);
        allWritten.addAll(before);
        index.awaitDocuments(before, EXPORT_TIMEOUT);
        Exporting.awaitAcknowledged(cluster, Records.highestPositions(before));
        final HttpAnswer pause = cluster.client().pause().http();
        assertThat(pause.status()).as("pause: %s", pause).isEqualTo(200);
        Exporting.awaitClusterState(cluster, "PAUSED");
        final List<WrittenRecord> lagging = Records.write(cluster, "lagging", 900);
        allWritten.addAll(lagging);
        // the gateway plans from the polled positions: wait until each leader's covers what was written
        final java.util.Map<Integer, Long> highest = Records.highestPositions(lagging);
        Await.until("the exporting view showing the lagging records " + highest, Exporting.STATE_TIMEOUT, () ->
        {
            final io.sluice.qa.cluster.ExportingStatus status = cluster.client().exporting();
            return highest.entrySet().stream().allMatch(entry -> status.leaderOf(entry.getKey())
                .flatMap(leader -> status.pair(leader, entry.getKey()))
                .map(pair -> pair.lastPosition() >= entry.getValue()).orElse(false));
        });

        final HttpAnswer reset = cluster.client().management("POST",
            "/actuator/exporters/" + EXPORTER + "/resetToLatestAndBackfill?backfillTaskCount=6", null);
        assertThat(reset.status()).as("reset: %s", reset).isEqualTo(202);
        final String backfillId = reset.json().path("backfillId").asString();

        Exporting.resumeAndAwaitExporting(cluster);
        final List<WrittenRecord> after = Records.write(cluster, "after-reset", 90);
        allWritten.addAll(after);
        index.awaitDocuments(lagging, EXPORT_TIMEOUT);
        index.awaitDocuments(after, EXPORT_TIMEOUT);
        Await.until("backfill " + backfillId + " SUCCEEDED", EXPORT_TIMEOUT, () ->
            "SUCCEEDED".equals(cluster.client().management("GET", "/actuator/backfills/" + backfillId, null)
                .json().path("state").asString("")));
        index.assertHoldsWithoutGaps(allWritten);
    }

    @Test
    @Order(5)
    void aSinkStoppedFor20SecondsWhileWritingShowsRetryingAndEveryRecordArrivesOnce() throws Exception
    {
        final List<WrittenRecord> before = Records.write(cluster, "before-outage", 60);
        allWritten.addAll(before);
        index.awaitDocuments(before, EXPORT_TIMEOUT);

        node.stop();
        final long stoppedAt = System.nanoTime();
        final List<WrittenRecord> during = new ArrayList<>();
        final AtomicBoolean sawRetrying = new AtomicBoolean();
        String retryingView = null;
        int batch = 0;
        while (System.nanoTime() - stoppedAt < TimeUnit.SECONDS.toNanos(20))
        {
            during.addAll(Records.write(cluster, "outage-" + batch++, 50));
            final HttpAnswer view = cluster.client().management("GET", "/actuator/exporters", null);
            if (view.status() == 200 && anyPartition(view.json(), "RETRYING"))
            {
                sawRetrying.set(true);
                retryingView = view.body();
            }
            Await.sleep(Duration.ofMillis(500));
        }
        allWritten.addAll(during);
        assertThat(sawRetrying).as("the exporters view showed RETRYING while the sink was down").isTrue();
        cluster.log("while the sink was down: " + retryingView);
        assertThat(retryingView).contains("\"lastError\":\"");

        node.start();
        final long restartedAt = System.nanoTime();
        index.awaitDocuments(during, EXPORT_TIMEOUT);
        cluster.log(during.size() + " records written during the outage indexed " +
            Duration.ofNanos(System.nanoTime() - restartedAt).toMillis() + " ms after the node was back");
        index.assertHoldsWithoutGaps(allWritten);
        awaitView(v -> everyPartition(v, "EXPORTING"));
    }

    @Test
    @Order(6)
    void thePartitionLeaderKilledMidBulksLeavesNoGapAndNoDuplicate() throws Exception
    {
        final int victim = cluster.awaitLeaders().leaderOf(1).orElseThrow();
        final ExecutorService writer = Executors.newSingleThreadExecutor();
        final AtomicBoolean stop = new AtomicBoolean();
        final List<WrittenRecord> written = Collections.synchronizedList(new ArrayList<>());
        final Future<?> writing = writer.submit(() ->
        {
            int batch = 0;
            while (!stop.get())
            {
                final List<RecordToWrite> records = new ArrayList<>();
                for (int i = 0; i < 100; i++)
                {
                    records.add(new RecordToWrite("kill-" + batch + "-" + i, "{\"batch\":" + batch + ",\"i\":" + i + "}"));
                }
                batch++;
                try
                {
                    written.addAll(cluster.client().writeBatch(records));
                }
                catch (final GatewayException e)
                {
                    Await.sleep(Duration.ofMillis(100)); // not acknowledged: may or may not be exported
                }
            }
            return null;
        });
        try
        {
            Await.until("records of partition 1 being indexed", EXPORT_TIMEOUT, () ->
                written.stream().filter(r -> r.partitionId() == 1).count() > 500 && index.count() > allWritten.size() + 500);
            cluster.killBroker(victim);
            cluster.log("killed broker " + victim + ", leader of partition 1, with " + written.size() + " written");
            Await.quietPeriod("broker " + victim + " stays dead while the writer goes on", Duration.ofSeconds(5));
            cluster.startBroker(victim);
            Await.quietPeriod("writes go on after broker " + victim + " restarted", Duration.ofSeconds(3));
        }
        finally
        {
            stop.set(true);
            writing.get(2, TimeUnit.MINUTES);
            writer.shutdown();
        }
        allWritten.addAll(written);
        index.awaitDocuments(List.copyOf(written), EXPORT_TIMEOUT);
        final List<SearchIndex.Document> documents = index.assertHoldsWithoutGaps(allWritten);
        final Set<String> ids = new TreeSet<>();
        documents.forEach(d -> ids.add(d.id()));
        assertThat(ids).hasSameSizeAs(documents);
        cluster.log(written.size() + " records written around the kill; index holds " + documents.size());
    }

    private JsonNode awaitView(final java.util.function.Predicate<JsonNode> condition)
    {
        return Await.value("the exporters view to show the expected states", Exporting.STATE_TIMEOUT, () ->
        {
            final HttpAnswer answer = cluster.client().management("GET", "/actuator/exporters", null);
            if (answer.status() != 200)
            {
                throw new IllegalStateException("GET /actuator/exporters: " + answer);
            }
            return condition.test(answer.json()) ? java.util.Optional.of(answer.json()) : java.util.Optional.empty();
        });
    }

    private static boolean everyPartition(final JsonNode view, final String state)
    {
        final JsonNode exporters = view.path("exporters");
        if (exporters.size() != 1 || !EXPORTER.equals(exporters.get(0).path("id").asString()))
        {
            return false;
        }
        final JsonNode partitions = exporters.get(0).path("partitions");
        if (partitions.size() != 3)
        {
            return false;
        }
        for (final JsonNode partition : partitions)
        {
            if (!state.equals(partition.path("state").asString()))
            {
                return false;
            }
        }
        return true;
    }

    private static boolean anyPartition(final JsonNode view, final String state)
    {
        for (final JsonNode exporter : view.path("exporters"))
        {
            for (final JsonNode partition : exporter.path("partitions"))
            {
                if (state.equals(partition.path("state").asString()))
                {
                    return true;
                }
            }
        }
        return false;
    }
}
