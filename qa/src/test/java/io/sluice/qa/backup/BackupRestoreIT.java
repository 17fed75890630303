package io.sluice.qa.backup;

import io.sluice.exporter.opensearch.testing.OpenSearchNode;
import io.sluice.qa.LongRunning;
import io.sluice.qa.QaClassOrder;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportedRecord;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.SluiceProcess;
import io.sluice.qa.cluster.WriteLoad;
import io.sluice.qa.cluster.WrittenRecord;
import io.sluice.qa.opensearch.SearchIndex;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.ResourceLock;
import tools.jackson.databind.JsonNode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 26, separate JVMs and a real OpenSearch node (in this JVM): under steady writes one call takes a backup that
 * completes, with a snapshot of the search index taken inside its cut; the cluster and the index are then wiped and
 * restored with {@code sluice.jar restore --all-brokers --sinks}: after a restart every record acknowledged before the
 * backup was asked for is in the restored log and in the index (from the snapshot up to the exporter's backed-up
 * position, exported again above it), and no record written after the 202, nothing above any checkpoint. A restore
 * into a data directory that is not empty is refused with one line. Then the gateway taking a backup is SIGKILLed
 * while it holds acknowledgements: within the hold's lease they flow again, and the backup reads FAILED.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ResourceLock(QaClassOrder.EMBEDDED_SINKS)
@LongRunning(seconds = 75)
class BackupRestoreIT
{
    private static final int PARTITIONS = 3;
    private static final String SEARCH = "search";
    private static final String INDEX = "sluice-backup-qa";
    private static final String REPOSITORY = "sluice-qa-backups";
    /**
     * Short, so the gateway-kill case waits little; long enough for a cut of this small cluster on 2 busy cores (a cut
     * took 8.4 s in CI beside two other clusters, the OpenSearch snapshots 0.6-3.9 s of it; one snapshot took 11.8 s
     * on a machine loaded past CI's own, ci30, and 12 s ran out).
     */
    private static final Duration HOLD_TIMEOUT = Duration.ofSeconds(20);

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    private OpenSearchNode node;
    private SearchIndex index;
    private SluiceCluster cluster;
    private Path store;

    @BeforeAll
    void start() throws Exception
    {
        node = OpenSearchNode.start(RUN.directory().resolve("opensearch"));
        node.registerFsRepository(REPOSITORY);
        index = new SearchIndex(node, INDEX);
        store = RUN.directory().resolve("backups");
        cluster = RUN.cluster("backup", builder -> builder
            .brokers(3).partitions(PARTITIONS).replicationFactor(3).gateways(2)
            .requestTimeout(Duration.ofSeconds(6))
            .property("sluice.backup.filesystem.path", store.toString())
            .property("sluice.backup.hold-timeout", HOLD_TIMEOUT.toMillis() + "ms")
            .property("sluice.exporters.file.type", "file")
            .property("sluice.exporters." + SEARCH + ".type", "opensearch")
            .property("sluice.exporters." + SEARCH + ".url", node.url())
            .property("sluice.exporters." + SEARCH + ".index", INDEX)
            .property("sluice.exporters." + SEARCH + ".bulk.max-delay", "200ms")
            .property("sluice.exporters." + SEARCH + ".snapshot.repository", REPOSITORY));
        cluster.start();
        cluster.awaitReady();
        cluster.awaitLeaders();
    }

    @AfterAll
    void stop() throws Exception
    {
        if (node != null)
        {
            node.close();
        }
    }

    @Test
    @Order(1)
    void aBackupTakenUnderWritesRestoresEveryRecordAcknowledgedBeforeItIntoTheLogAndTheIndexAndNoneWrittenAfterIt()
        throws Exception
    {
        final List<WrittenRecord> before;
        final HttpAnswer taken;
        try (WriteLoad load = new WriteLoad(cluster, "before", 2, 10, Duration.ofMillis(10), Duration.ofMinutes(2)))
        {
            // slow writes or failing ones: the count and the first failures tell which
            Await.until("some records acknowledged", SluiceCluster.scaled(Duration.ofSeconds(30)),
                () -> load.acknowledged().size() >= 500, () -> load.acknowledged().size() + " of 500 acknowledged, " +
                    load.failures().size() + " failed, first: " + load.failures().stream().limit(3).toList());
            before = List.copyOf(load.acknowledged());
            taken = cluster.client().management("POST", "/actuator/backups", "{\"backupId\": 42}");
            load.stop();
        }
        assertThat(taken.status()).as(taken.toString()).isEqualTo(202);
        assertThat(taken.json().path("state").asString()).isEqualTo("IN_PROGRESS");
        final List<WrittenRecord> after = new ArrayList<>();
        for (int i = 0; i < 30; i++)
        {
            after.add(cluster.client().write("after-" + i, "{\"after\":" + i + "}"));
        }

        final JsonNode backup = Await.value("backup 42 completed", SluiceCluster.scaled(Duration.ofSeconds(60)), () ->
        {
            final JsonNode view = cluster.client().get("/actuator/backups/42").json();
            return "COMPLETED".equals(view.path("state").asString()) ? java.util.Optional.of(view) :
                java.util.Optional.empty();
        });
        final Map<Integer, Long> checkpoints = new HashMap<>();
        final Map<Integer, Long> exported = new HashMap<>();
        final Map<Integer, Long> searchPositions = new HashMap<>();
        for (final JsonNode partition : backup.path("partitions"))
        {
            checkpoints.put(partition.path("partitionId").asInt(), partition.path("checkpointPosition").asLong());
            final JsonNode file = partition.path("exporterPositions").path("file");
            exported.put(partition.path("partitionId").asInt(), file.isMissingNode() ? 0 : file.asLong());
            final JsonNode search = partition.path("exporterPositions").path(SEARCH);
            searchPositions.put(partition.path("partitionId").asInt(), search.isMissingNode() ? 0 : search.asLong());
        }
        assertThat(checkpoints).hasSize(PARTITIONS);
        assertThat(backup.path("holdMillis").asLong()).as("acknowledgements were held for the cut").isPositive();
        assertThat(backup.path("sinks")).as(backup.toString()).hasSize(1);
        final JsonNode sink = backup.path("sinks").get(0);
        assertThat(sink.path("exporterId").asString()).isEqualTo(SEARCH);
        assertThat(sink.path("state").asString()).isEqualTo("SUCCESS");
        final JsonNode verified = cluster.client().management("POST", "/actuator/backups/42/verify", null).json();
        assertThat(verified.path("ok").asBoolean()).as(verified.toString()).isTrue();
        for (final WrittenRecord record : before)
        {
            assertThat(record.position()).as("%s acknowledged before the backup is at or below its checkpoint", record)
                .isLessThanOrEqualTo(checkpoints.get(record.partitionId()));
        }
        for (final WrittenRecord record : after)
        {
            assertThat(record.position()).as("%s written after the 202 is above the checkpoint", record)
                .isGreaterThan(checkpoints.get(record.partitionId()));
        }

        // Wipe the brokers' data, the exports and the index; restore every broker and the index, start again.
        for (int b = 0; b < 3; b++)
        {
            cluster.killBroker(b);
        }
        SluiceCluster.deleteRecursively(cluster.dataDirectory());
        Files.createDirectories(cluster.dataDirectory());
        assertThat(node.request("DELETE", "/" + INDEX, null).statusCode()).isEqualTo(200);
        assertThat(index.count()).isZero();
        final SluiceProcess restore = restore(cluster, store, "restore", "--all-brokers", "--sinks");
        assertThat(restore.exitCode()).as(restore.log()).contains(0);
        // Before any broker runs, the index is the snapshot: every record up to X(search, p), nothing above C(p).
        final Map<Integer, Set<Long>> snapshot = positionsInIndex();
        for (final WrittenRecord record : before)
        {
            if (record.position() <= searchPositions.get(record.partitionId()))
            {
                assertThat(snapshot.getOrDefault(record.partitionId(), Set.of())).as("%s is in the restored snapshot",
                    record).contains(record.position());
            }
        }
        snapshot.forEach((p, positions) -> assertThat(positions).as("partition %d: the snapshot holds nothing above " +
            "its checkpoint", p).allMatch((position) -> position <= checkpoints.get(p)));
        final SluiceProcess again = restore(cluster, store, "restore-again", "--node-id", "1");
        assertThat(again.exitCode()).as(again.log()).isNotEqualTo(java.util.Optional.of(0));
        assertThat(again.log()).contains("is not empty");
        for (int b = 0; b < 3; b++)
        {
            cluster.startBroker(b);
        }
        cluster.awaitReady();
        cluster.awaitLeaders();
        cluster.readWholeExports();

        final Map<Integer, Map<Long, String>> acknowledgedKeys = new HashMap<>();
        for (final WrittenRecord record : before)
        {
            acknowledgedKeys.computeIfAbsent(record.partitionId(), (p) -> new HashMap<>())
                .put(record.position(), record.key());
        }
        for (int p = 1; p <= PARTITIONS; p++)
        {
            final int partition = p;
            final long from = exported.get(p) + 1;
            final long to = checkpoints.get(p);
            Await.until("partition " + p + " exported again from the restored log up to its checkpoint",
                SluiceCluster.scaled(Duration.ofSeconds(90)), () -> cluster.exportedRecords(partition).stream()
                    .anyMatch((r) -> r.position() == to) || from > to);
            final Map<Long, String> restored = new HashMap<>();
            for (final ExportedRecord record : cluster.exportedRecords(p))
            {
                restored.put(record.position(), record.key());
            }
            assertThat(restored.keySet()).as("partition %d: nothing above its checkpoint, nothing at or below the " +
                "exporter's backed-up position", p).allMatch((position) -> position >= from && position <= to);
            for (final Map.Entry<Long, String> ack : acknowledgedKeys.getOrDefault(p, Map.of()).entrySet())
            {
                if (ack.getKey() >= from)
                {
                    assertThat(restored.get(ack.getKey())).as("partition %d position %d", p, ack.getKey())
                        .isEqualTo(ack.getValue());
                }
            }
        }
        // The index converges to exactly the restored log: every position up to each checkpoint, nothing above.
        final long restoredRecords = checkpoints.values().stream().mapToLong(Long::longValue).sum();
        Await.until("the index holds the restored log's " + restoredRecords + " records",
            SluiceCluster.scaled(Duration.ofSeconds(90)), () -> index.count() >= restoredRecords);
        final Map<Integer, Map<Long, String>> inIndex = new HashMap<>();
        for (final SearchIndex.Document document : index.documents())
        {
            inIndex.computeIfAbsent(document.partitionId(), (p) -> new HashMap<>()).put(document.position(),
                document.key());
        }
        for (int p = 1; p <= PARTITIONS; p++)
        {
            final Set<Long> expected = new TreeSet<>();
            for (long position = 1; position <= checkpoints.get(p); position++)
            {
                expected.add(position);
            }
            assertThat(new TreeSet<>(inIndex.getOrDefault(p, Map.of()).keySet()))
                .as("partition %d: the index holds exactly positions 1..%d", p, checkpoints.get(p)).isEqualTo(expected);
        }
        for (final WrittenRecord record : before)
        {
            assertThat(inIndex.get(record.partitionId()).get(record.position())).as("%s in the index", record)
                .isEqualTo(record.key());
        }
        // Writes go on after the restored records.
        final WrittenRecord next = cluster.client().write("restored-next", "{}");
        assertThat(next.position()).isGreaterThan(checkpoints.get(next.partitionId()));
    }

    @Test
    @Order(2)
    void aGatewayKilledWhileItHoldsAcknowledgementsLeavesThemFlowingWithinTheLeaseAndItsBackupFailed() throws Exception
    {
        // A broker that does not lead the control group is suspended, so the backup's wait for every pair to obey its
        // hold lasts: the gateway is killed then, holding.
        final int controlLeader = cluster.client(1).get("/actuator/partitions").json().path("controlLeaderId").asInt(-1);
        assertThat(controlLeader).isNotNegative();
        final int suspended = (controlLeader + 1) % 3;
        cluster.suspendBroker(suspended);
        final CompletableFuture<HttpAnswer> taking = CompletableFuture.supplyAsync(() ->
            cluster.client().management("POST", "/actuator/backups", "{\"backupId\": 500}"));
        final Path started = store.resolve("backups").resolve("500").resolve("started");
        Await.until("backup 500 holds acknowledgements", SluiceCluster.scaled(Duration.ofSeconds(20)),
            () -> Files.exists(started));
        cluster.killGateway(0);
        final long killedNanos = System.nanoTime();
        cluster.resumeBroker(suspended);
        assertThat(taking.handle((answer, failure) -> answer == null || answer.status() != 202).get(30, TimeUnit.SECONDS))
            .as("the killed gateway answered no 202").isTrue();

        final List<WrittenRecord> written = new ArrayList<>();
        for (int i = 0; i < 10; i++)
        {
            written.add(cluster.client(1).write("while-held-" + i, "{}"));
        }
        Await.until("the file exporter's acknowledgements flow again", HOLD_TIMEOUT.plus(SluiceCluster.scaled(
            Duration.ofSeconds(20))), () -> acknowledgedAtLeast(written));
        final long flowingAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNanos);
        cluster.log("acknowledgements flowed again " + flowingAfterMs + " ms after the gateway was killed");
        assertThat(Duration.ofMillis(flowingAfterMs)).as("within the hold's lease (and the check interval)")
            .isLessThan(HOLD_TIMEOUT.plus(Duration.ofSeconds(5)));

        final JsonNode failed = Await.value("backup 500 reads FAILED", SluiceCluster.scaled(Duration.ofSeconds(60)), () ->
        {
            final JsonNode view = cluster.client(1).get("/actuator/backups/500").json();
            return "FAILED".equals(view.path("state").asString()) ? java.util.Optional.of(view) : java.util.Optional.empty();
        });
        assertThat(failed.path("failureReason").asString()).contains("hold");
        final HttpAnswer next = cluster.client(1).management("POST", "/actuator/backups", "{\"backupId\": 501}");
        assertThat(next.status()).as("no hold is left behind: " + next).isEqualTo(202);
    }

    /** Whether gateway 1 shows the file exporter acknowledged every record written. */
    private boolean acknowledgedAtLeast(final List<WrittenRecord> written)
    {
        final Map<Integer, Long> last = new HashMap<>();
        written.forEach((r) -> last.merge(r.partitionId(), r.position(), Math::max));
        final Map<Integer, Long> acknowledged = new HashMap<>();
        for (final JsonNode exporter : cluster.client(1).get("/actuator/exporters").json().path("exporters"))
        {
            if ("file".equals(exporter.path("id").asString()))
            {
                for (final JsonNode partition : exporter.path("partitions"))
                {
                    acknowledged.put(partition.path("partitionId").asInt(), partition.path("position").asLong());
                }
            }
        }
        return last.entrySet().stream().allMatch((e) -> acknowledged.getOrDefault(e.getKey(), -1L) >= e.getValue());
    }

    private Map<Integer, Set<Long>> positionsInIndex()
    {
        return index.documents().stream().collect(Collectors.groupingBy(SearchIndex.Document::partitionId,
            Collectors.mapping(SearchIndex.Document::position, Collectors.toSet())));
    }

    private SluiceProcess restore(
        final SluiceCluster cluster, final Path store, final String name, final String... target)
    {
        final List<String> args = new ArrayList<>(List.of("--backup-id", "42"));
        args.addAll(List.of(target));
        args.addAll(List.of(
            "--sluice.cluster.brokers=" + cluster.brokerList(),
            "--sluice.cluster.partitions=" + cluster.partitionCount(),
            "--sluice.cluster.replication-factor=" + cluster.replicasOf(1).size(),
            "--sluice.data-dir=" + cluster.dataDirectory(),
            "--sluice.backup.filesystem.path=" + store,
            "--sluice.exporters." + SEARCH + ".type=opensearch",
            "--sluice.exporters." + SEARCH + ".url=" + node.url(),
            "--sluice.exporters." + SEARCH + ".index=" + INDEX,
            "--sluice.exporters." + SEARCH + ".snapshot.repository=" + REPOSITORY));
        final SluiceProcess process = RUN.process(name, "restore", args, RUN.directory());
        process.start();
        assertThat(process.awaitExit(SluiceCluster.scaled(Duration.ofSeconds(60)))).as(name + " exits").isTrue();
        return process;
    }
}
