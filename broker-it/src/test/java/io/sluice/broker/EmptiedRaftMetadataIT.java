package io.sluice.broker;

import io.sluice.broker.partition.PartitionState;
import io.sluice.protocol.codecs.AdminRequestKind;
import org.apache.ratis.protocol.RaftGroupId;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A broker restarted after a full disk emptied its Raft members' metadata files. Ratis writes a member's term and vote
 * ({@code raft-meta}) and its configuration ({@code raft-meta.conf}) to a temporary file and moves it over the old one
 * when the stream closes, and the close succeeds after a write that found no space: the file moved into place is
 * empty. Seen in qa FullDiskIT as a broker that no longer started ("'term' not found in properties: {}").
 */
class EmptiedRaftMetadataIT
{
    @TempDir
    Path dataDir;

    @AutoClose
    private TestCluster cluster;

    @Test
    @Timeout(180)
    void aBrokerWhoseRaftMetadataFilesWereLeftEmptyStartsKeepsItsRecordsAndFollowsOn() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 2, 3, (c) -> c.withAutoRebalance(false));
        final int records = 40;
        cluster.awaitLeader(1);
        cluster.awaitLeader(2);
        cluster.adminAll(AdminRequestKind.PAUSE_EXPORTING, 1);
        cluster.appendRecords(1, records, 4, "a");
        cluster.appendRecords(2, records, 4, "b");
        final int victim = otherThanLeaders();
        awaitHolds(victim, records);
        final Map<RaftGroupId, Long> termsBefore = terms(victim);

        cluster.stopBroker(victim);
        final List<Path> emptied = emptyRaftMetadata(cluster.config(victim).brokerDir());
        assertThat(emptied).as("every group's raft-meta and raft-meta.conf").hasSize(2 * termsBefore.size());
        cluster.startBroker(victim);

        // Its members never go back to a term below the one they had (a lower term could vote twice in a term).
        final Map<RaftGroupId, Long> termsAfter = terms(victim);
        termsBefore.forEach((group, term) -> assertThat(termsAfter.get(group)).as(group.toString()).isGreaterThanOrEqualTo(term));
        awaitHolds(victim, records);
        cluster.appendRecords(1, 8, 4, "c");
        cluster.appendRecords(2, 8, 4, "d");
        awaitHolds(victim, records + 8);

        // And it starts again from what it mended.
        cluster.stopBroker(victim);
        cluster.startBroker(victim);
        awaitHolds(victim, records + 8);
    }

    private int otherThanLeaders()
    {
        for (int b = 0; b < 3; b++)
        {
            if (b != cluster.leaderOf(1) && b != cluster.leaderOf(2))
            {
                return b;
            }
        }
        // Both partitions led by different brokers: the third leads none.
        throw new AssertionError("no broker leads neither partition");
    }

    /**
     * Waits until the broker's replicas hold what their leaders hold, at least {@code lastPosition} (a batch the test
     * client retried across the election the mended term causes may have been appended twice).
     */
    private void awaitHolds(final int broker, final long lastPosition)
    {
        for (int p = 1; p <= 2; p++)
        {
            final int partitionId = p;
            final PartitionState replica = cluster.brokers[broker].partition(p).state();
            await("broker " + broker + " holds partition " + p + " as its leader does, at least up to " + lastPosition)
                .atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() ->
                {
                    final int leader = cluster.leaderOf(partitionId);
                    return leader >= 0 && replica.lastPosition() >= lastPosition &&
                        replica.lastPosition() == cluster.brokers[leader].partition(partitionId).state().lastPosition();
                });
        }
    }

    private Map<RaftGroupId, Long> terms(final int broker) throws IOException
    {
        final Map<RaftGroupId, Long> terms = new HashMap<>();
        for (final RaftGroupId group : cluster.brokers[broker].raftServer().getGroupIds())
        {
            terms.put(group, cluster.brokers[broker].raftServer().getDivision(group).getInfo().getCurrentTerm());
        }
        return terms;
    }

    private static List<Path> emptyRaftMetadata(final Path brokerDir) throws IOException
    {
        try (Stream<Path> files = Files.walk(brokerDir.resolve("raft")))
        {
            final List<Path> metadata = files.filter((f) -> f.getFileName().toString().equals("raft-meta") ||
                f.getFileName().toString().equals("raft-meta.conf")).toList();
            for (final Path file : metadata)
            {
                Files.write(file, new byte[0]);
            }
            return metadata;
        }
    }
}
