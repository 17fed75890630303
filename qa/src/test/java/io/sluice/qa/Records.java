package io.sluice.qa;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportFiles;
import io.sluice.qa.cluster.ExportedRecord;
import io.sluice.qa.cluster.GatewayClient;
import io.sluice.qa.cluster.Json;
import io.sluice.qa.cluster.RecordToWrite;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/** Writing records through the gateway and checking what the file exporter wrote. */
final class Records
{
    static final Duration WRITE_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(90));
    static final Duration EXPORT_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(90));
    private static final int BATCH = 50;

    private Records()
    {
    }

    /** Writes {@code count} records keyed {@code prefix-i} (spread over partitions), retrying until each batch is acknowledged. */
    static List<WrittenRecord> write(final SluiceCluster cluster, final String prefix, final int count)
    {
        final List<WrittenRecord> written = new ArrayList<>(count);
        for (int from = 0; from < count; from += BATCH)
        {
            final List<RecordToWrite> batch = new ArrayList<>();
            for (int i = from; i < Math.min(count, from + BATCH); i++)
            {
                batch.add(new RecordToWrite(prefix + "-" + i, "{\"prefix\":\"" + prefix + "\",\"seq\":" + i + "}"));
            }
            written.addAll(writeBatchUntilAcknowledged(cluster.client(), batch, WRITE_TIMEOUT));
        }
        return written;
    }

    /** Sends the batch again after any non-200 answer (at least once), until acknowledged or the deadline passes. */
    static List<WrittenRecord> writeBatchUntilAcknowledged(
        final GatewayClient client, final List<RecordToWrite> batch, final Duration timeout)
    {
        return Await.value("batch of " + batch.size() + " starting with key " + batch.get(0).key() + " acknowledged",
            timeout, () ->
                Optional.of(client.writeBatch(batch)));
    }

    /** Partition id to the positions exported (distinct). */
    static Map<Integer, Set<Long>> exportedPositions(final SluiceCluster cluster)
    {
        final Map<Integer, Set<Long>> positions = new TreeMap<>();
        for (int partitionId = 1; partitionId <= cluster.partitionCount(); partitionId++)
        {
            final Set<Long> set = new HashSet<>();
            cluster.exportedRecords(partitionId).forEach(record -> set.add(record.position()));
            positions.put(partitionId, set);
        }
        return positions;
    }

    /** Records of {@code written} not (yet) in the export files. */
    static List<WrittenRecord> notExported(final SluiceCluster cluster, final List<WrittenRecord> written)
    {
        final Map<Integer, Set<Long>> exported = exportedPositions(cluster);
        return written.stream()
            .filter(record -> !exported.getOrDefault(record.partitionId(), Set.of()).contains(record.position()))
            .toList();
    }

    static void awaitExported(final SluiceCluster cluster, final List<WrittenRecord> written)
    {
        Await.until(written.size() + " acknowledged records exported", EXPORT_TIMEOUT,
            () -> notExported(cluster, written).isEmpty());
    }

    /**
     * Per partition: lines in position order with no gap (a line's position is at most one above every
     * position before it; duplicates from re-exports may go back), the distinct positions contiguous, and
     * each acknowledged record exported at its position with its key and payload.
     */
    static void assertExportedInOrderWithoutGaps(final SluiceCluster cluster, final List<WrittenRecord> written)
    {
        final Map<Integer, Map<Long, WrittenRecord>> byPartition = new HashMap<>();
        for (final WrittenRecord record : written)
        {
            final WrittenRecord previous = byPartition.computeIfAbsent(record.partitionId(), id -> new HashMap<>())
                .put(record.position(), record);
            assertThat(previous).as("two acknowledged records at partition %d position %d: %s and %s",
                record.partitionId(), record.position(), previous, record).isNull();
        }
        final ExportFiles exports = cluster.exports();
        for (int partitionId = 1; partitionId <= cluster.partitionCount(); partitionId++)
        {
            final List<ExportedRecord> lines = exports.records(partitionId);
            final Map<Long, WrittenRecord> acknowledged = byPartition.getOrDefault(partitionId, Map.of());
            long highest = Long.MIN_VALUE;
            final Map<Long, ExportedRecord> firstAt = new HashMap<>();
            for (int i = 0; i < lines.size(); i++)
            {
                final ExportedRecord line = lines.get(i);
                assertThat(line.partitionId()).as("partition of line %d of %s", i + 1, exports.file(partitionId))
                    .isEqualTo(partitionId);
                if (highest != Long.MIN_VALUE)
                {
                    assertThat(line.position())
                        .as("line %d of %s: position %d after highest %d skips positions", i + 1,
                            exports.file(partitionId), line.position(), highest)
                        .isLessThanOrEqualTo(highest + 1);
                }
                highest = Math.max(highest, line.position());
                final ExportedRecord first = firstAt.putIfAbsent(line.position(), line);
                if (first != null)
                {
                    assertThat(line.key()).as("duplicate of position %d in partition %d has another key",
                        line.position(), partitionId).isEqualTo(first.key());
                }
            }
            for (final WrittenRecord record : acknowledged.values())
            {
                final ExportedRecord line = firstAt.get(record.position());
                assertThat(line).as("acknowledged %s exported", record).isNotNull();
                assertThat(line.key()).as("key exported at partition %d position %d", partitionId, record.position())
                    .isEqualTo(record.key());
                assertThat(Json.parse(line.payloadJson()))
                    .as("payload exported at partition %d position %d", partitionId, record.position())
                    .isEqualTo(Json.parse(record.payloadJson()));
            }
            if (!acknowledged.isEmpty())
            {
                final long lowestAcknowledged = acknowledged.keySet().stream().mapToLong(Long::longValue).min().orElseThrow();
                final long lowestExported = firstAt.keySet().stream().mapToLong(Long::longValue).min().orElseThrow();
                assertThat(lowestExported).as("first exported position of partition %d", partitionId)
                    .isLessThanOrEqualTo(lowestAcknowledged);
            }
        }
    }

    /** Every export file's bytes, to prove nothing was exported over a stretch of time. */
    static Map<Integer, byte[]> snapshot(final SluiceCluster cluster)
    {
        final Map<Integer, byte[]> contents = new TreeMap<>();
        for (int partitionId = 1; partitionId <= cluster.partitionCount(); partitionId++)
        {
            contents.put(partitionId, cluster.exports().bytes(partitionId));
        }
        return contents;
    }

    /** Fails with the new lines when any export file differs from the snapshot. */
    static void assertUnchanged(final SluiceCluster cluster, final Map<Integer, byte[]> snapshot, final String when)
    {
        for (final Map.Entry<Integer, byte[]> entry : snapshot.entrySet())
        {
            final byte[] now = cluster.exports().bytes(entry.getKey());
            if (!Arrays.equals(now, entry.getValue()))
            {
                final String added = now.length > entry.getValue().length ?
                    new String(now, entry.getValue().length, Math.min(2_000, now.length - entry.getValue().length)) :
                    "(file shrank or was rewritten: " + entry.getValue().length + " -> " + now.length + " bytes)";
                throw new AssertionError("exported while paused (" + when + "): partition " + entry.getKey() +
                    " file " + cluster.exports().file(entry.getKey()) + " changed; new content: " + added);
            }
        }
    }

    /** Watches the export files for {@code duration}, failing at the first change. */
    static void assertUnchangedFor(
        final SluiceCluster cluster, final Map<Integer, byte[]> snapshot, final Duration duration, final String when)
    {
        final long end = System.nanoTime() + duration.toNanos();
        do
        {
            assertUnchanged(cluster, snapshot, when);
            Await.sleep(Duration.ofMillis(250));
        }
        while (System.nanoTime() - end < 0);
        assertUnchanged(cluster, snapshot, when);
    }
}
