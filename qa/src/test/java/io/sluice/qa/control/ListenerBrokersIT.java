package io.sluice.qa.control;

import io.sluice.gateway.records.PartitionSelector;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.qa.Exporting;
import io.sluice.qa.LongRunning;
import io.sluice.qa.Records;
import io.sluice.qa.cluster.ExportingControlAnswer;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static io.sluice.qa.Exporting.awaitClusterState;
import static io.sluice.qa.Exporting.until200;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 15: a cluster of 6 brokers of which 3 vote in the control group ({@code sluice.cluster.control-voters=3},
 * brokers 0 to 2) and 3 follow it as listeners (brokers 3 to 5), on separate JVMs, 6 partitions RF 3. Listeners hold
 * a replica and answer their pairs from it, lead partitions and obey the pause; they never make a quorum.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
@LongRunning(seconds = 40)
class ListenerBrokersIT
{
    private static final int BROKERS = 6;
    private static final int VOTERS = 3;
    private static final Duration QUIET_PERIOD = Duration.ofSeconds(3);

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    @Test
    void listenersAnswerAndObeyPausesButTwoVotersDownLeaveNoControlQuorum()
    {
        final SluiceCluster cluster = RUN.cluster("six", builder -> builder.brokers(BROKERS).partitions(6)
            .replicationFactor(3).requestTimeout(Duration.ofSeconds(4))
            .property("sluice.cluster.control-voters", String.valueOf(VOTERS)));
        cluster.start();
        cluster.awaitReady();
        Exporting.everyBrokerUpAndExporting(cluster);
        Records.awaitExported(cluster, Records.write(cluster, "six-before", 60));
        final int leader = cluster.client().get("/actuator/partitions").json().path("controlLeaderId").asInt(-1);
        assertThat(leader).as("the control group is led by a voter").isBetween(0, VOTERS - 1);

        // Every pair, the listeners' among them, answers once its broker applied the pause.
        final ExportingControlAnswer pause = until200("pause", () -> cluster.client().pause());
        assertThat(pause.pairsWithOutcome("SUCCEEDED")).isEqualTo(cluster.allPairs());
        final Map<Integer, byte[]> snapshot = Records.snapshot(cluster);
        final List<WrittenRecord> written = new ArrayList<>(Records.write(cluster, "six-paused-a", 200));
        Records.assertUnchangedFor(cluster, snapshot, QUIET_PERIOD, "after the pause");

        // A listener restarted catches up from the group and leads its partitions again without exporting.
        final int listener = 4;
        cluster.killBroker(listener);
        cluster.startBroker(listener);
        cluster.awaitBrokerAvailable(listener);
        cluster.awaitPreferredLeaders();
        written.addAll(Records.write(cluster, "six-paused-b", 200));
        Records.assertUnchangedFor(cluster, snapshot, QUIET_PERIOD, "after listener " + listener + " restarted");
        awaitClusterState(cluster, "PAUSED");

        // Two of the three voters down: the three listeners cannot make a quorum, so nothing resumes, not even the
        // partitions only listeners replicate (4: brokers 3, 4, 5), and nothing is exported.
        final List<Integer> downVoters = List.of((leader + 1) % VOTERS, (leader + 2) % VOTERS);
        downVoters.forEach(cluster::killBroker);
        final Set<PartitionReplica> listenerPairs = new TreeSet<>();
        for (int b = VOTERS; b < BROKERS; b++)
        {
            listenerPairs.addAll(cluster.pairsOf(b));
        }
        final ExportingControlAnswer resume = cluster.client().resume();
        assertThat(resume.status()).as("resume with voters %s down: %s", downVoters, resume).isIn(503, 504);
        assertThat(resume.pairsWithOutcome("SUCCEEDED")).as("no listener pair resumed: %s", resume)
            .doesNotContainAnyElementsOf(listenerPairs);
        final List<WrittenRecord> onListeners = writeToPartition4(cluster);
        Records.assertUnchangedFor(cluster, snapshot, QUIET_PERIOD, "with voters " + downVoters + " down");

        downVoters.forEach(cluster::startBroker);
        downVoters.forEach(cluster::awaitBrokerAvailable);
        until200("resume", () -> cluster.client().resume());
        written.addAll(onListeners);
        Records.awaitExported(cluster, written);
        Records.assertExportedWithoutGaps(cluster, written);
    }

    /** Records for partition 4, which only the listeners 3, 4 and 5 replicate: it takes writes with two voters down. */
    private static List<WrittenRecord> writeToPartition4(final SluiceCluster cluster)
    {
        final PartitionSelector selector = new PartitionSelector(cluster.partitionCount());
        final List<WrittenRecord> written = new ArrayList<>();
        for (int i = 0; written.size() < 20; i++)
        {
            final String key = "listener-" + i;
            if (selector.partitionFor(key) == 4)
            {
                final WrittenRecord record = cluster.client().write(key, "{\"n\": " + i + "}");
                assertThat(record.partitionId()).isEqualTo(4);
                written.add(record);
            }
        }
        return written;
    }
}
