package io.sluice.qa.operator;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportedRecord;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.PairState;
import io.sluice.qa.cluster.RecordToWrite;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/** Writing records through the gateway, and watching the file exporter's output and the gateway's exporting view. */
final class Exports
{
    static final Duration WRITE_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(90));
    static final Duration EXPORT_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(90));
    static final Duration STATE_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(60));
    private static final int BATCH = 50;

    private Exports()
    {
    }

    /** Writes {@code count} records keyed {@code prefix-i}, each batch sent again until acknowledged. */
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
            written.addAll(Await.value("batch " + batch.get(0).key() + ".. acknowledged", WRITE_TIMEOUT,
                () -> Optional.of(cluster.client().writeBatch(batch))));
        }
        return written;
    }

    /** Records of {@code written} not (yet) in the export files. */
    static List<WrittenRecord> notExported(final SluiceCluster cluster, final List<WrittenRecord> written)
    {
        final Map<Integer, Set<Long>> exported = new TreeMap<>();
        for (int partitionId = 1; partitionId <= cluster.partitionCount(); partitionId++)
        {
            final Set<Long> positions = new HashSet<>();
            for (final ExportedRecord record : cluster.exportedRecords(partitionId))
            {
                positions.add(record.position());
            }
            exported.put(partitionId, positions);
        }
        return written.stream()
            .filter(record -> !exported.getOrDefault(record.partitionId(), Set.of()).contains(record.position()))
            .toList();
    }

    static void awaitExported(final SluiceCluster cluster, final List<WrittenRecord> written)
    {
        Await.until(written.size() + " acknowledged records exported", EXPORT_TIMEOUT,
            () -> notExported(cluster, written).isEmpty());
    }

    /** Every export file's bytes, to show later that nothing was exported meanwhile. */
    static Map<Integer, byte[]> snapshot(final SluiceCluster cluster)
    {
        final Map<Integer, byte[]> contents = new TreeMap<>();
        for (int partitionId = 1; partitionId <= cluster.partitionCount(); partitionId++)
        {
            contents.put(partitionId, cluster.exports().bytes(partitionId));
        }
        return contents;
    }

    static void assertUnchanged(final SluiceCluster cluster, final Map<Integer, byte[]> snapshot, final String when)
    {
        snapshot.forEach((partitionId, before) ->
        {
            final byte[] now = cluster.exports().bytes(partitionId);
            if (!Arrays.equals(now, before))
            {
                throw new AssertionError("exported while paused (" + when + "): " + cluster.exports().file(partitionId) +
                    " went from " + before.length + " to " + now.length + " bytes");
            }
        });
    }

    /** The gateway's view is polled from the brokers, so a state shows a moment after the call's answer. */
    static ExportingStatus awaitClusterState(final SluiceCluster cluster, final String state)
    {
        return Await.value("the gateway reporting every pair " + state, STATE_TIMEOUT, () ->
        {
            final ExportingStatus status = cluster.client().exporting();
            return state.equals(status.state()) ? Optional.of(status) : Optional.empty();
        });
    }

    /** Waits for the gateway to report {@code state} for the cluster; checks every pair of the cluster is listed so. */
    static ExportingStatus assertEveryPair(final SluiceCluster cluster, final String state)
    {
        final ExportingStatus status = awaitClusterState(cluster, state);
        assertThat(status.targets()).extracting(PairState::pair).containsExactlyInAnyOrderElementsOf(cluster.allPairs());
        assertThat(status.targets()).allSatisfy(pair -> assertThat(pair.state()).as("%s", pair).isEqualTo(state));
        return status;
    }

    /** Every broker running (SIGCONT for a stopped one, a start for a dead one), a leader per partition, each pair known. */
    static void everyBrokerUp(final SluiceCluster cluster)
    {
        for (int id = 0; id < cluster.brokerCount(); id++)
        {
            if (cluster.broker(id).isSuspended())
            {
                cluster.resumeBroker(id);
            }
            if (!cluster.broker(id).isAlive())
            {
                cluster.startBroker(id);
            }
        }
        cluster.awaitReady();
        cluster.awaitLeaders();
        for (int id = 0; id < cluster.brokerCount(); id++)
        {
            cluster.awaitBrokerAvailable(id);
        }
    }
}
