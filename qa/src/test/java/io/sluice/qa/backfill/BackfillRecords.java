package io.sluice.qa.backfill;

import io.sluice.qa.Exporting;
import io.sluice.qa.Records;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.RecordToWrite;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import static io.sluice.qa.Exporting.STATE_TIMEOUT;

/**
 * The backfill side of one cluster: records of one key, the leaders' positions in the exporting view, and the reset
 * and backfill endpoints. Writing records and checking the exports is {@link Records}'s part, pausing and resuming
 * {@link Exporting}'s.
 */
final class BackfillRecords
{
    static final String EXPORTER = "file";
    static final Duration BACKFILL_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(180));

    private BackfillRecords()
    {
    }

    /** Writes {@code count} records all keyed {@code key} (so all to one partition), payloads numbered. */
    static List<WrittenRecord> writeOneKey(final SluiceCluster cluster, final String key, final int count, final int batch)
    {
        return Records.writeInBatches(cluster, count, batch, i -> new RecordToWrite(key, "{\"seq\":" + i + "}"));
    }

    /**
     * Waits until the (polled) view shows each partition's leader with at least these last positions; answers the
     * leaders' exported positions then.
     */
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
            return Exporting.leaderExportedPositions(status, cluster.partitionCount());
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
