package io.sluice.qa.backfill;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportedRecord;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.RecordToWrite;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;

/** Writing records, reading the export files, the exporting view and the backfill endpoints of one cluster. */
final class BackfillRecords
{
    static final String EXPORTER = "file";
    static final Duration WRITE_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(90));
    static final Duration EXPORT_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(90));
    static final Duration STATE_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(60));
    static final Duration BACKFILL_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(180));

    private BackfillRecords()
    {
    }

    /** Writes {@code count} records keyed {@code prefix-i} in batches of {@code batch}, each sent until acknowledged. */
    static List<WrittenRecord> write(final SluiceCluster cluster, final String prefix, final int count, final int batch)
    {
        final List<WrittenRecord> written = new ArrayList<>(count);
        for (int from = 0; from < count; from += batch)
        {
            final List<RecordToWrite> records = new ArrayList<>();
            for (int i = from; i < Math.min(count, from + batch); i++)
            {
                records.add(new RecordToWrite(prefix + "-" + i, "{\"prefix\":\"" + prefix + "\",\"seq\":" + i + "}"));
            }
            written.addAll(Await.value("batch " + records.get(0).key() + ".. acknowledged", WRITE_TIMEOUT,
                () -> Optional.of(cluster.client().writeBatch(records))));
        }
        return written;
    }

    /** Like {@link Await#value} with its own poll interval, for states that last well under a second. */
    static <T> T poll(final String what, final Duration timeout, final Supplier<Optional<T>> probe, final Duration interval)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        RuntimeException last = null;
        while (System.nanoTime() - deadline < 0)
        {
            try
            {
                final Optional<T> value = probe.get();
                if (value.isPresent())
                {
                    return value.get();
                }
            }
            catch (final RuntimeException ex)
            {
                last = ex;
            }
            Await.sleep(interval);
        }
        throw new AssertionError("timed out after " + timeout + " waiting for " + what +
            (last != null ? " (last failure: " + last + ")" : ""), last);
    }

    /** Writes {@code count} records all keyed {@code key} (so all to one partition), payloads numbered. */
    static List<WrittenRecord> writeOneKey(final SluiceCluster cluster, final String key, final int count, final int batch)
    {
        final List<WrittenRecord> written = new ArrayList<>(count);
        for (int from = 0; from < count; from += batch)
        {
            final List<RecordToWrite> records = new ArrayList<>();
            for (int i = from; i < Math.min(count, from + batch); i++)
            {
                records.add(new RecordToWrite(key, "{\"seq\":" + i + "}"));
            }
            written.addAll(Await.value("batch " + from + ".. of key " + key + " acknowledged", WRITE_TIMEOUT,
                () -> Optional.of(cluster.client().writeBatch(records))));
        }
        return written;
    }

    /** Partition id to the distinct positions in its export file. */
    static Map<Integer, Set<Long>> exportedPositions(final SluiceCluster cluster)
    {
        final Map<Integer, Set<Long>> positions = new TreeMap<>();
        for (int partitionId = 1; partitionId <= cluster.partitionCount(); partitionId++)
        {
            final Set<Long> set = new TreeSet<>();
            for (final ExportedRecord record : cluster.exportedRecords(partitionId))
            {
                set.add(record.position());
            }
            positions.put(partitionId, set);
        }
        return positions;
    }

    static List<WrittenRecord> notExported(final SluiceCluster cluster, final List<WrittenRecord> written)
    {
        final Map<Integer, Set<Long>> exported = exportedPositions(cluster);
        return written.stream()
            .filter(record -> !exported.getOrDefault(record.partitionId(), Set.of()).contains(record.position()))
            .toList();
    }

    static List<WrittenRecord> exported(final SluiceCluster cluster, final List<WrittenRecord> written)
    {
        final Map<Integer, Set<Long>> exported = exportedPositions(cluster);
        return written.stream()
            .filter(record -> exported.getOrDefault(record.partitionId(), Set.of()).contains(record.position()))
            .toList();
    }

    static void awaitExported(final SluiceCluster cluster, final List<WrittenRecord> written, final Duration timeout)
    {
        Await.value(written.size() + " acknowledged records exported", timeout, () ->
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
     * Every acknowledged record exported with its key (duplicates allowed, each with the same key), and per
     * partition the distinct exported positions contiguous: no gap between the lowest and highest.
     */
    static void assertExportedWithoutGaps(final SluiceCluster cluster, final List<WrittenRecord> written)
    {
        final Map<Integer, List<WrittenRecord>> byPartition = new TreeMap<>();
        written.forEach(record -> byPartition.computeIfAbsent(record.partitionId(), id -> new ArrayList<>()).add(record));
        for (int partitionId = 1; partitionId <= cluster.partitionCount(); partitionId++)
        {
            final Map<Long, String> keyAt = new HashMap<>();
            for (final ExportedRecord line : cluster.exportedRecords(partitionId))
            {
                final String first = keyAt.putIfAbsent(line.position(), line.key());
                if (first != null && !first.equals(line.key()))
                {
                    throw new AssertionError("partition " + partitionId + " position " + line.position() +
                        " exported twice with different keys: " + first + " and " + line.key());
                }
            }
            final TreeSet<Long> positions = new TreeSet<>(keyAt.keySet());
            if (!positions.isEmpty())
            {
                long expected = positions.first();
                for (final long position : positions)
                {
                    if (position != expected)
                    {
                        throw new AssertionError("partition " + partitionId + ": positions " + expected + ".." +
                            (position - 1) + " missing from " + cluster.exports().file(partitionId) +
                            " (exported " + positions.first() + ".." + positions.last() + ", " + positions.size() +
                            " distinct)");
                    }
                    expected = position + 1;
                }
            }
            for (final WrittenRecord record : byPartition.getOrDefault(partitionId, List.of()))
            {
                final String key = keyAt.get(record.position());
                if (!record.key().equals(key))
                {
                    throw new AssertionError("acknowledged " + record + " not exported (found key " + key + " at " +
                        "partition " + partitionId + " position " + record.position() + ")");
                }
            }
        }
    }

    static Map<Integer, byte[]> snapshot(final SluiceCluster cluster)
    {
        final Map<Integer, byte[]> contents = new TreeMap<>();
        for (int partitionId = 1; partitionId <= cluster.partitionCount(); partitionId++)
        {
            contents.put(partitionId, cluster.exports().bytes(partitionId));
        }
        return contents;
    }

    /** Watches the export files for {@code duration}, failing at the first change. */
    static void assertUnchangedFor(
        final SluiceCluster cluster, final Map<Integer, byte[]> snapshot, final Duration duration, final String when)
    {
        final long end = System.nanoTime() + duration.toNanos();
        while (true)
        {
            for (final Map.Entry<Integer, byte[]> entry : snapshot.entrySet())
            {
                final byte[] now = cluster.exports().bytes(entry.getKey());
                if (!Arrays.equals(now, entry.getValue()))
                {
                    final int before = entry.getValue().length;
                    throw new AssertionError("exported " + when + ": " + cluster.exports().file(entry.getKey()) +
                        " went from " + before + " to " + now.length + " bytes; new: " +
                        (now.length > before ? new String(now, before, Math.min(1_000, now.length - before)) : "?"));
                }
            }
            if (System.nanoTime() - end >= 0)
            {
                return;
            }
            Await.sleep(Duration.ofMillis(250));
        }
    }

    static Map<Integer, Long> highestPositions(final List<WrittenRecord> written)
    {
        final Map<Integer, Long> highest = new TreeMap<>();
        written.forEach(record -> highest.merge(record.partitionId(), record.position(), Math::max));
        return highest;
    }

    static Map<Integer, Long> lowestPositions(final List<WrittenRecord> written)
    {
        final Map<Integer, Long> lowest = new TreeMap<>();
        written.forEach(record -> lowest.merge(record.partitionId(), record.position(), Math::min));
        return lowest;
    }

    /** Partition id to its leader's exported position, empty while some partition has no single leader. */
    static Optional<Map<Integer, Long>> leaderPositions(final ExportingStatus status, final int partitionCount)
    {
        final Map<Integer, Long> positions = new TreeMap<>();
        for (int partitionId = 1; partitionId <= partitionCount; partitionId++)
        {
            final int id = partitionId;
            final Optional<Long> position = status.leaderOf(partitionId)
                .flatMap(leader -> status.pair(leader, id))
                .map(pair -> pair.exportedPosition());
            if (position.isEmpty())
            {
                return Optional.empty();
            }
            positions.put(partitionId, position.get());
        }
        return Optional.of(positions);
    }

    /** Waits until the (polled) view shows each partition's leader with at least these last positions. */
    static Map<Integer, Long> awaitLeaderPositionsCovering(final SluiceCluster cluster, final Map<Integer, Long> lastAtLeast)
    {
        return Await.value("the exporting view showing the last positions " + lastAtLeast, STATE_TIMEOUT, () ->
        {
            final ExportingStatus status = cluster.client().exporting();
            for (final Map.Entry<Integer, Long> entry : lastAtLeast.entrySet())
            {
                final int partitionId = entry.getKey();
                final boolean covered = status.leaderOf(partitionId).flatMap(leader -> status.pair(leader, partitionId))
                    .map(pair -> pair.lastPosition() >= entry.getValue()).orElse(false);
                if (!covered)
                {
                    return Optional.empty();
                }
            }
            return leaderPositions(status, cluster.partitionCount());
        });
    }

    static ExportingStatus awaitClusterState(final SluiceCluster cluster, final String state)
    {
        return Await.value("the gateway reporting every pair " + state, STATE_TIMEOUT, () ->
        {
            final ExportingStatus status = cluster.client().exporting();
            return state.equals(status.state()) ? Optional.of(status) : Optional.empty();
        });
    }

    static HttpAnswer reset(final SluiceCluster cluster, final String exporterId, final String query)
    {
        return cluster.client().management("POST",
            "/actuator/exporters/" + exporterId + "/resetToLatestAndBackfill" + query, null);
    }

    /** Ids of every backfill the gateway lists (fails when the list is not a complete 200). */
    static Set<String> backfillIds(final SluiceCluster cluster)
    {
        final HttpAnswer list = cluster.client().management("GET", "/actuator/backfills", null);
        if (list.status() != 200 || !list.json().path("unavailablePartitions").isEmpty())
        {
            throw new IllegalStateException("GET /actuator/backfills: " + list);
        }
        final Set<String> ids = new TreeSet<>();
        list.json().path("backfills").forEach(backfill -> ids.add(backfill.path("backfillId").asString("")));
        return ids;
    }

    static Set<String> awaitBackfillIds(final SluiceCluster cluster)
    {
        return Await.value("GET /actuator/backfills complete", STATE_TIMEOUT, () -> Optional.of(backfillIds(cluster)));
    }

    static HttpAnswer backfill(final SluiceCluster cluster, final String backfillId)
    {
        return cluster.client().management("GET", "/actuator/backfills/" + backfillId, null);
    }

    /** Waits for the backfill to show {@code state} with every partition reachable; its last view. */
    static JsonNode awaitBackfillState(
        final SluiceCluster cluster, final String backfillId, final String state, final Duration timeout)
    {
        return Await.value("backfill " + backfillId + " " + state, timeout, () ->
        {
            final HttpAnswer answer = backfill(cluster, backfillId);
            if (answer.status() != 200)
            {
                throw new IllegalStateException("GET backfill " + backfillId + ": " + answer);
            }
            final JsonNode view = answer.json();
            if (state.equals(view.path("state").asString("")) && view.path("unavailablePartitions").isEmpty())
            {
                return Optional.of(view);
            }
            throw new IllegalStateException("backfill " + backfillId + " is " + answer.body());
        });
    }
}
