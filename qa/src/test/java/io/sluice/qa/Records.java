package io.sluice.qa;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportFiles;
import io.sluice.qa.cluster.ExportedRecord;
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
import java.util.UUID;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Writing records through the gateway and checking what the file exporter wrote: the one copy every qa test uses,
 * so that "acknowledged", "exported" and "no gap" mean the same in each of them.
 */
public final class Records
{
    public static final Duration WRITE_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(90));
    public static final Duration EXPORT_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(90));
    private static final int BATCH = 50;

    private Records()
    {
    }

    /** Writes {@code count} records keyed {@code prefix-i}, so spread over the partitions. */
    public static List<WrittenRecord> write(final SluiceCluster cluster, final String prefix, final int count)
    {
        return writeInBatches(cluster, count, BATCH,
            i -> new RecordToWrite(prefix + "-" + i, "{\"prefix\":\"" + prefix + "\",\"seq\":" + i + "}"));
    }

    /**
     * Writes records {@code 0..count-1} as {@code record} makes them, {@code batchSize} to a request. A batch is sent
     * again after any non-200 answer until acknowledged, so a write during a failover only waits; it carries an
     * {@code Idempotency-Key}, as a client that retries must: an answer such as a 504 under load leaves open whether
     * the batch was appended, and a retry without the key appends it twice (ci29: 10,100 documents for 10,000).
     */
    public static List<WrittenRecord> writeInBatches(
        final SluiceCluster cluster, final int count, final int batchSize, final IntFunction<RecordToWrite> record)
    {
        final String keyPrefix = "qa-" + UUID.randomUUID() + "-";
        final List<WrittenRecord> written = new ArrayList<>(count);
        for (int from = 0; from < count; from += batchSize)
        {
            final int to = Math.min(count, from + batchSize);
            final List<RecordToWrite> batch = new ArrayList<>(to - from);
            for (int i = from; i < to; i++)
            {
                batch.add(record.apply(i));
            }
            final String key = keyPrefix + from;
            written.addAll(Await.value("records " + from + ".." + (to - 1) + " (first key " + batch.get(0).key() +
                ") acknowledged", WRITE_TIMEOUT, () -> Optional.of(cluster.client().writeBatch(batch, key))));
        }
        return written;
    }

    /** Records of {@code written} not (yet) in the export files. */
    public static List<WrittenRecord> notExported(final SluiceCluster cluster, final List<WrittenRecord> written)
    {
        final Map<Integer, Set<Long>> exported = exportedPositions(cluster);
        return written.stream().filter(record -> !isIn(exported, record)).toList();
    }

    /** Records of {@code written} already in the export files. */
    public static List<WrittenRecord> exported(final SluiceCluster cluster, final List<WrittenRecord> written)
    {
        final Map<Integer, Set<Long>> exported = exportedPositions(cluster);
        return written.stream().filter(record -> isIn(exported, record)).toList();
    }

    /** Waits until every record of {@code written} is exported; on timeout, says how many are not and which. */
    public static void awaitExported(final SluiceCluster cluster, final List<WrittenRecord> written)
    {
        Await.value(written.size() + " acknowledged records exported", EXPORT_TIMEOUT, () ->
        {
            final List<WrittenRecord> missing = notExported(cluster, written);
            if (missing.isEmpty())
            {
                return Optional.of(Boolean.TRUE);
            }
            throw new IllegalStateException(missing.size() + " not exported yet, first " +
                missing.subList(0, Math.min(5, missing.size())));
        });
    }

    /**
     * Per partition: each acknowledged record exported at its position with its key and payload, every line at one
     * position (a re-export) with the same key, and the distinct positions contiguous, no gap between the lowest and
     * the highest. Nothing about the order of the lines, as a backfill exports a range behind the regular exporter.
     */
    public static void assertExportedWithoutGaps(final SluiceCluster cluster, final List<WrittenRecord> written)
    {
        final Map<Integer, Map<Long, WrittenRecord>> acknowledged = byPartitionAndPosition(written);
        final ExportFiles exports = cluster.exports();
        for (int partitionId = 1; partitionId <= cluster.partitionCount(); partitionId++)
        {
            final TreeMap<Long, ExportedRecord> firstAt = firstLineAtEachPosition(exports, partitionId);
            assertContiguous(exports, partitionId, firstAt);
            for (final WrittenRecord record : acknowledged.getOrDefault(partitionId, Map.of()).values())
            {
                final ExportedRecord line = firstAt.get(record.position());
                assertThat(line).as("acknowledged %s exported", record).isNotNull();
                assertThat(line.key()).as("key exported at partition %d position %d", partitionId, record.position())
                    .isEqualTo(record.key());
                assertThat(Json.parse(line.payloadJson()))
                    .as("payload exported at partition %d position %d", partitionId, record.position())
                    .isEqualTo(Json.parse(record.payloadJson()));
            }
        }
    }

    /**
     * {@link #assertExportedWithoutGaps}, and each file's lines in position order: no line more than one above every
     * line before it (a re-export may go back). Holds wherever the regular exporter is the only one writing.
     */
    public static void assertExportedInOrderWithoutGaps(final SluiceCluster cluster, final List<WrittenRecord> written)
    {
        final ExportFiles exports = cluster.exports();
        for (int partitionId = 1; partitionId <= cluster.partitionCount(); partitionId++)
        {
            final List<ExportedRecord> lines = exports.records(partitionId);
            long highest = Long.MIN_VALUE;
            for (int i = 0; i < lines.size(); i++)
            {
                final long position = lines.get(i).position();
                if (highest != Long.MIN_VALUE)
                {
                    assertThat(position)
                        .as("line %d of %s: position %d after highest %d skips positions", i + 1,
                            exports.file(partitionId), position, highest)
                        .isLessThanOrEqualTo(highest + 1);
                }
                highest = Math.max(highest, position);
            }
        }
        assertExportedWithoutGaps(cluster, written);
    }

    /** Every export file's bytes, to prove nothing was exported over a stretch of time. */
    public static Map<Integer, byte[]> snapshot(final SluiceCluster cluster)
    {
        final Map<Integer, byte[]> contents = new TreeMap<>();
        for (int partitionId = 1; partitionId <= cluster.partitionCount(); partitionId++)
        {
            contents.put(partitionId, cluster.exports().bytes(partitionId));
        }
        return contents;
    }

    /** Fails, showing the new lines, when any export file differs from the snapshot. */
    public static void assertUnchanged(
        final SluiceCluster cluster, final Map<Integer, byte[]> snapshot, final String when)
    {
        for (final Map.Entry<Integer, byte[]> entry : snapshot.entrySet())
        {
            final byte[] before = entry.getValue();
            final byte[] now = cluster.exports().bytes(entry.getKey());
            if (!Arrays.equals(now, before))
            {
                final String added = now.length > before.length ?
                    new String(now, before.length, Math.min(2_000, now.length - before.length)) :
                    "(none: the file shrank or was rewritten)";
                throw new AssertionError("exported while paused (" + when + "): " +
                    cluster.exports().file(entry.getKey()) + " went from " + before.length + " to " + now.length +
                    " bytes; new content: " + added);
            }
        }
    }

    /** Watches the export files for {@code duration}, failing at the first change. */
    public static void assertUnchangedFor(
        final SluiceCluster cluster, final Map<Integer, byte[]> snapshot, final Duration duration, final String when)
    {
        Await.quietPeriod("nothing exported " + when, duration, Duration.ofMillis(250),
            () -> assertUnchanged(cluster, snapshot, when));
    }

    /** Partition id to the highest position of {@code written} in it. */
    public static Map<Integer, Long> highestPositions(final List<WrittenRecord> written)
    {
        final Map<Integer, Long> highest = new TreeMap<>();
        written.forEach(record -> highest.merge(record.partitionId(), record.position(), Math::max));
        return highest;
    }

    /** Partition id to the lowest position of {@code written} in it. */
    public static Map<Integer, Long> lowestPositions(final List<WrittenRecord> written)
    {
        final Map<Integer, Long> lowest = new TreeMap<>();
        written.forEach(record -> lowest.merge(record.partitionId(), record.position(), Math::min));
        return lowest;
    }

    /** Partition id to the positions in its export file (distinct). */
    private static Map<Integer, Set<Long>> exportedPositions(final SluiceCluster cluster)
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

    private static boolean isIn(final Map<Integer, Set<Long>> exported, final WrittenRecord record)
    {
        return exported.getOrDefault(record.partitionId(), Set.of()).contains(record.position());
    }

    /** The acknowledged records by partition and position; two at one position would be a lost write. */
    private static Map<Integer, Map<Long, WrittenRecord>> byPartitionAndPosition(final List<WrittenRecord> written)
    {
        final Map<Integer, Map<Long, WrittenRecord>> byPartition = new HashMap<>();
        for (final WrittenRecord record : written)
        {
            final WrittenRecord previous = byPartition.computeIfAbsent(record.partitionId(), id -> new HashMap<>())
                .put(record.position(), record);
            assertThat(previous).as("two acknowledged records at partition %d position %d: %s and %s",
                record.partitionId(), record.position(), previous, record).isNull();
        }
        return byPartition;
    }

    /** Position to the partition's first line at it; checks each line's partition, and each re-export's key. */
    private static TreeMap<Long, ExportedRecord> firstLineAtEachPosition(
        final ExportFiles exports, final int partitionId)
    {
        final List<ExportedRecord> lines = exports.records(partitionId);
        final TreeMap<Long, ExportedRecord> firstAt = new TreeMap<>();
        for (int i = 0; i < lines.size(); i++)
        {
            final ExportedRecord line = lines.get(i);
            assertThat(line.partitionId()).as("partition of line %d of %s", i + 1, exports.file(partitionId))
                .isEqualTo(partitionId);
            final ExportedRecord first = firstAt.putIfAbsent(line.position(), line);
            if (first != null)
            {
                assertThat(line.key()).as("line %d of %s: re-export of position %d with another key", i + 1,
                    exports.file(partitionId), line.position()).isEqualTo(first.key());
            }
        }
        return firstAt;
    }

    /** No position missing between the lowest and the highest the partition's file has. */
    private static void assertContiguous(
        final ExportFiles exports, final int partitionId, final TreeMap<Long, ExportedRecord> firstAt)
    {
        if (firstAt.isEmpty())
        {
            return;
        }
        long expected = firstAt.firstKey();
        for (final long position : firstAt.keySet())
        {
            if (position != expected)
            {
                throw new AssertionError("partition " + partitionId + ": positions " + expected + ".." +
                    (position - 1) + " missing from " + exports.file(partitionId) + " (exported " +
                    firstAt.firstKey() + ".." + firstAt.lastKey() + ", " + firstAt.size() + " distinct)");
            }
            expected = position + 1;
        }
    }
}
