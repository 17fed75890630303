package io.sluice.qa.exporter;

import io.sluice.qa.Records;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportFiles;
import io.sluice.qa.cluster.ExportedRecord;
import io.sluice.qa.cluster.Json;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 29: an exporter added to a cluster that already compacted records (separate JVMs: one broker, two
 * partitions, a gateway; snapshots every few entries so the record log compacts quickly). It must start at the
 * oldest record each partition still holds, name the range it can never export in one WARN line and in the
 * exporters view, export everything held and everything new, and not hold compaction back; the same for a
 * renamed exporter.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class ExporterAddedLaterIT
{
    private static final int PARTITIONS = 2;
    private static final Duration EXPORTING_WITHIN = SluiceCluster.scaled(Duration.ofSeconds(20));
    private static final Pattern SEGMENT = Pattern.compile("segment-(\\d+)\\.log");

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    @Test
    void anExporterAddedOrRenamedAfterCompactionStartsAtTheOldestHeldRecordAndSaysWhatItMissed()
    {
        final SluiceCluster cluster = RUN.cluster("cluster", builder -> builder.brokers(1).partitions(PARTITIONS)
            .replicationFactor(1)
            .brokerProperty("sluice.broker.snapshot-threshold", "8")
            .brokerProperty("sluice.broker.segment-size", "1KB"));
        cluster.start();
        cluster.awaitReady();
        final List<WrittenRecord> written = new ArrayList<>();
        writeUntilCompacted(cluster, written, Map.of());

        addExporterAndCheck(cluster, written, "copy");
        final Map<Integer, Long> copyExportedUpTo = lastWritten(written);
        addExporterAndCheck(cluster, written, "renamed");
        backfillOverACompactedRange(cluster, written, copyExportedUpTo);
    }

    /**
     * {@code copy} comes back while exporting is paused (so it cannot move past what was compacted while it was
     * gone): a backfill of it plans the held part only and reports the rest, in the dry run and the start, and
     * succeeds once resumed.
     */
    private void backfillOverACompactedRange(
        final SluiceCluster cluster, final List<WrittenRecord> written, final Map<Integer, Long> copyExportedUpTo)
    {
        final Map<Integer, Long> beyond = new TreeMap<>();
        copyExportedUpTo.forEach((p, last) -> beyond.put(p, last + 1));
        writeUntilCompacted(cluster, written, beyond);
        assertThat(cluster.management("POST", "/actuator/exporting/pause", null).status()).isEqualTo(200);
        cluster.stopBroker(0);
        final Map<Integer, Long> firstHeld = firstHeldPositions(cluster);
        cluster.reconfigureBroker(0, Map.of(
            "sluice.exporters.file.type", "file",
            "sluice.exporters.renamed.type", "file",
            "sluice.exporters.copy.type", "file"));
        cluster.startBroker(0);
        cluster.awaitReady();
        final String path = "/actuator/exporters/copy/resetToLatestAndBackfill";

        final JsonNode dryRun = Await.value("a dry run of copy's backfill", EXPORTING_WITHIN, () ->
        {
            final var answer = cluster.management("POST", path + "?dryRun=true", null);
            return answer.status() == 200 ? Optional.of(answer.json()) : Optional.empty();
        });
        assertUnavailable(dryRun, copyExportedUpTo, firstHeld);
        final var started = cluster.management("POST", path, null);
        assertThat(started.status()).as("%s", started).isEqualTo(202);
        assertUnavailable(started.json(), copyExportedUpTo, firstHeld);
        final String backfillId = started.json().get("backfillId").asText();
        assertThat(cluster.management("POST", "/actuator/exporting/resume", null).status()).isEqualTo(200);

        Await.until("backfill " + backfillId + " SUCCEEDED", Records.EXPORT_TIMEOUT, () ->
        {
            final JsonNode view = cluster.management("GET", "/actuator/backfills/" + backfillId, null).json();
            assertThat(view.get("state").asText()).as("%s", view).isNotEqualTo("FAILED");
            return "SUCCEEDED".equals(view.get("state").asText());
        });
        final ExportFiles exports = new ExportFiles(cluster.dataDirectory().resolve("exports").resolve("copy"));
        for (int partitionId = 1; partitionId <= PARTITIONS; partitionId++)
        {
            final int p = partitionId;
            final List<Long> held = written.stream()
                .filter(record -> record.partitionId() == p && record.position() >= firstHeld.get(p))
                .map(WrittenRecord::position).toList();
            assertThat(exports.records(p).stream().map(ExportedRecord::position).collect(Collectors.toSet()))
                .as("partition %d: the held part backfilled", p).containsAll(held);
        }
    }

    private static void assertUnavailable(
        final JsonNode answer, final Map<Integer, Long> exportedUpTo, final Map<Integer, Long> firstHeld)
    {
        final Map<Integer, Long> unavailableTo = new TreeMap<>();
        for (final JsonNode range : answer.get("unavailable"))
        {
            final int partitionId = range.get("partitionId").asInt();
            // From copy's replicated position on: at most one past what it exported (a last ack may not have been replicated).
            assertThat(range.get("fromPosition").asLong()).as("%s", answer)
                .isBetween(1L, exportedUpTo.get(partitionId) + 1);
            unavailableTo.put(partitionId, range.get("toPosition").asLong());
        }
        final Map<Integer, Long> expected = new TreeMap<>();
        firstHeld.forEach((p, first) -> expected.put(p, first - 1));
        assertThat(unavailableTo).as("%s", answer).isEqualTo(expected);
        // A started backfill's ranges are its tasks' (from the old position: they move past the compacted part
        // when they run); the plan's start at the first held position.
        for (final JsonNode range : answer.has("dryRun") ? answer.get("ranges") : Json.MAPPER.createArrayNode())
        {
            assertThat(range.get("fromPosition").asLong()).as("%s", answer)
                .isEqualTo(firstHeld.get(range.get("partitionId").asInt()));
        }
    }

    private static Map<Integer, Long> lastWritten(final List<WrittenRecord> written)
    {
        final Map<Integer, Long> last = new TreeMap<>();
        written.forEach(record -> last.merge(record.partitionId(), record.position(), Math::max));
        return last;
    }

    /** Restarts the broker with {@code file} and {@code exporterId}, and checks the new exporter's start. */
    private void addExporterAndCheck(final SluiceCluster cluster, final List<WrittenRecord> written, final String exporterId)
    {
        cluster.stopBroker(0);
        final Map<Integer, Long> firstHeld = firstHeldPositions(cluster);
        assertThat(firstHeld.values()).as("compacted before %s existed: %s", exporterId, firstHeld)
            .allSatisfy(first -> assertThat(first).isGreaterThan(1));
        cluster.reconfigureBroker(0, Map.of(
            "sluice.exporters.file.type", "file",
            "sluice.exporters." + exporterId + ".type", "file"));
        cluster.startBroker(0);
        cluster.awaitReady();

        // EXPORTING within seconds, with the compacted range in the view.
        final JsonNode view = Await.value(exporterId + " EXPORTING on every partition with its unavailable range",
            EXPORTING_WITHIN, () ->
            {
                final JsonNode exporter = exporterView(cluster, exporterId);
                if (exporter == null)
                {
                    return Optional.empty();
                }
                for (final JsonNode partition : exporter.get("partitions"))
                {
                    if (!"EXPORTING".equals(partition.get("state").asText()) ||
                        partition.get("unavailable") == null || partition.get("unavailable").isEmpty())
                    {
                        return Optional.empty();
                    }
                }
                return Optional.of(exporter);
            });
        final Map<Integer, Long> missedUpTo = new TreeMap<>();
        for (final JsonNode partition : view.get("partitions"))
        {
            final int partitionId = partition.get("partitionId").asInt();
            final JsonNode range = partition.get("unavailable").get(0);
            assertThat(range.get("fromPosition").asLong()).isEqualTo(1);
            assertThat(range.get("toPosition").asLong()).as("partition %d", partitionId)
                .isEqualTo(firstHeld.get(partitionId) - 1);
            missedUpTo.put(partitionId, range.get("toPosition").asLong());
        }
        final String log = cluster.broker(0).log();
        missedUpTo.forEach((partitionId, to) -> assertThat(log).as("one WARN line names the range")
            .containsPattern("WARN .*partition " + partitionId + " on broker 0: exporter " + exporterId +
                " can never export positions 1\\.\\." + to + ":"));

        // Every record still held plus every new one, while compaction goes on.
        final Map<Integer, Long> before = firstHeldPositions(cluster);
        writeUntilCompacted(cluster, written, before);
        final ExportFiles exports = new ExportFiles(cluster.dataDirectory().resolve("exports").resolve(exporterId));
        for (int partitionId = 1; partitionId <= PARTITIONS; partitionId++)
        {
            final int p = partitionId;
            final List<Long> expected = written.stream()
                .filter(record -> record.partitionId() == p && record.position() > missedUpTo.get(p))
                .map(WrittenRecord::position).sorted().toList();
            Await.until(exporterId + " exported every held and new record of partition " + p, Records.EXPORT_TIMEOUT,
                () -> exports.records(p).stream().map(ExportedRecord::position).collect(Collectors.toSet())
                    .containsAll(expected));
        }
    }

    /** Writes records until every partition compacted past {@code beyond} (its first held position moved). */
    private static void writeUntilCompacted(
        final SluiceCluster cluster, final List<WrittenRecord> written, final Map<Integer, Long> beyond)
    {
        final int[] n = {written.size()};
        Await.until("every partition compacted past " + beyond, SluiceCluster.scaled(Duration.ofSeconds(120)), () ->
        {
            for (int i = 0; i < 20; i++)
            {
                n[0]++;
                written.add(cluster.client().write("k-" + n[0], "{\"n\":" + n[0] + "}"));
            }
            final Map<Integer, Long> first = firstHeldPositions(cluster);
            return first.size() == PARTITIONS && first.entrySet().stream()
                .allMatch(e -> e.getValue() > Math.max(1, beyond.getOrDefault(e.getKey(), 1L)));
        });
    }

    /** Each partition's lowest held position, from its record log's segment files on disk. */
    private static Map<Integer, Long> firstHeldPositions(final SluiceCluster cluster)
    {
        final Map<Integer, Long> first = new TreeMap<>();
        try (Stream<Path> files = Files.walk(cluster.brokerDataDirectory(0)))
        {
            for (final Path file : files.filter(f -> f.getParent().getFileName().toString().equals("records")).toList())
            {
                final Matcher matcher = SEGMENT.matcher(file.getFileName().toString());
                if (!matcher.matches())
                {
                    continue;
                }
                final int partitionId = partitionOf(file);
                if (partitionId < 0)
                {
                    continue;
                }
                first.merge(partitionId, Long.parseLong(matcher.group(1)), Math::min);
            }
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
        return first;
    }

    /** The partition whose Raft group folder (named by the group id, a UUID of the partition id) holds the file. */
    private static int partitionOf(final Path segment)
    {
        for (int partitionId = 1; partitionId <= PARTITIONS; partitionId++)
        {
            final String group = java.util.UUID.nameUUIDFromBytes(
                ("sluice-partition-" + partitionId).getBytes(java.nio.charset.StandardCharsets.UTF_8)).toString();
            if (segment.toString().contains(group))
            {
                return partitionId;
            }
        }
        return -1;
    }

    private static JsonNode exporterView(final SluiceCluster cluster, final String exporterId)
    {
        final JsonNode body = cluster.management("GET", "/actuator/exporters", null).json();
        for (final JsonNode exporter : body.get("exporters"))
        {
            if (exporterId.equals(exporter.get("id").asText()))
            {
                return exporter;
            }
        }
        return null;
    }
}
