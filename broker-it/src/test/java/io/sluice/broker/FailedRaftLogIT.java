package io.sluice.broker;

import io.sluice.broker.disk.DiskWatermark;
import io.sluice.broker.partition.PartitionState;
import io.sluice.testing.TmpfsVolume;
import org.apache.ratis.protocol.RaftGroupId;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A replica whose Raft log write fails on a full disk. Ratis fails such a log for good, and a leader elected with it
 * stayed "in LEADER state but not ready yet" after the disk was freed, its partition unavailable until the broker
 * restarted (qa FullDiskIT, ci23). One broker's directory is on a small tmpfs of its own, filled by something else;
 * Raft then moves the leadership to it: its new term's first entry finds no space.
 */
class FailedRaftLogIT
{
    private static final int VICTIM = 1;

    @TempDir
    Path dataDir;

    @Test
    @Timeout(240)
    void aReplicaWhoseRaftLogFailedOnAFullDiskLeavesTheGroupServingAndComesBackOnceFreed() throws Exception
    {
        final Path volume = Files.createDirectories(dataDir.resolve("broker-" + VICTIM));
        mountTmpfs(volume, "24m");
        TestCluster cluster = null;
        try
        {
            cluster = TestCluster.start(dataDir, 3, 1, 3, (c) -> c.withAutoRebalance(false)
                .withSnapshots(1_000, 1024 * 1024)
                .withDiskWatermark(new DiskWatermark(1.0, 0)));
            final int leader = cluster.awaitLeader(1);
            if (leader == VICTIM)
            {
                cluster.transferLeadership(1, 0);
                awaitLeaderOtherThan(cluster, VICTIM);
            }
            cluster.appendRecords(1, 20, 4, "before");
            awaitHoldsAsLeader(cluster, VICTIM, 20);

            // Something else fills the volume and goes on filling whatever the broker frees (its headroom, a
            // compacted segment), while the leader replicates more than a Raft log segment: the victim's next
            // segment finds no space, and Ratis fails its log for good.
            final TestCluster running = cluster;
            final RaftGroupId group = cluster.brokers[VICTIM].partition(1).group().getGroupId();
            try (Filler filler = new Filler(volume.resolve("filler")))
            {
                await("the volume is full").atMost(Duration.ofSeconds(30))
                    .until(() -> Files.getFileStore(volume).getUsableSpace() == 0);
                cluster.appendRecords(1, 160, 4, "while-full", 8 * 1024);
                await("broker " + VICTIM + " closed its replica whose Raft log failed").atMost(Duration.ofSeconds(60))
                    .until(() -> !hosts(running, VICTIM, group));
                // The group goes on with its other members while the victim's disk stays full.
                assertThat(cluster.appendRecords(1, 8, 4, "closed")).hasSize(8);
                assertThat(cluster.leaderOf(1)).isNotEqualTo(VICTIM);
            }

            // The victim opens its replica again, catches up, and can lead again.
            await("broker " + VICTIM + " opened its replica again").atMost(Duration.ofSeconds(60))
                .until(() -> hosts(running, VICTIM, group));
            cluster.appendRecords(1, 8, 4, "freed");
            awaitHoldsAsLeader(cluster, VICTIM, 20 + 160 + 8 + 8);
            cluster.transferLeadership(1, VICTIM);
            await("broker " + VICTIM + " leads again").atMost(Duration.ofSeconds(60))
                .until(() -> running.leaderOf(1) == VICTIM && running.brokers[VICTIM].partition(1).member().isReadyLeader());
            assertThat(cluster.appendRecords(1, 8, 4, "after")).hasSize(8);
            for (int b = 0; b < 3; b++)
            {
                awaitHoldsAsLeader(cluster, b, 20 + 160 + 8 + 8 + 8);
            }
        }
        finally
        {
            if (cluster != null)
            {
                cluster.close();
            }
            TmpfsVolume.unmount(volume);
        }
    }

    private static boolean hosts(final TestCluster cluster, final int broker, final RaftGroupId group)
        throws IOException
    {
        for (final RaftGroupId id : cluster.brokers[broker].raftServer().getGroupIds())
        {
            if (id.equals(group))
            {
                return true;
            }
        }
        return false;
    }

    private static void awaitLeaderOtherThan(final TestCluster cluster, final int broker)
    {
        await("a leader other than broker " + broker).atMost(Duration.ofSeconds(30))
            .until(() -> cluster.leaderOf(1) >= 0 && cluster.leaderOf(1) != broker);
    }

    /** Waits until the broker's replica holds what the leader holds, at least {@code lastPosition}. */
    private static void awaitHoldsAsLeader(final TestCluster cluster, final int broker, final long lastPosition)
    {
        await("broker " + broker + " holds partition 1 as its leader does, at least up to " + lastPosition)
            .atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() ->
            {
                final int leader = cluster.leaderOf(1);
                final PartitionState replica = cluster.brokers[broker].partition(1).state();
                return leader >= 0 && replica.lastPosition() >= lastPosition &&
                    replica.lastPosition() == cluster.brokers[leader].partition(1).state().lastPosition();
            });
    }

    /** Something else writing into the volume: it takes every block that comes free until closed, then deletes its file. */
    private static final class Filler implements AutoCloseable
    {
        private final Path file;
        private final Thread thread;
        private volatile boolean running = true;

        Filler(final Path file)
        {
            this.file = file;
            this.thread = new Thread(this::fill, "filler");
            thread.setDaemon(true);
            thread.start();
        }

        private void fill()
        {
            final ByteBuffer block = ByteBuffer.allocate(4096);
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE))
            {
                long at = 0;
                while (running)
                {
                    try
                    {
                        at += channel.write(block.clear(), at);
                    }
                    catch (final IOException full)
                    {
                        Thread.sleep(5);
                    }
                }
            }
            catch (final IOException | InterruptedException e)
            {
                throw new IllegalStateException("filler stopped: " + e, e);
            }
        }

        @Override
        public void close() throws Exception
        {
            running = false;
            thread.join(10_000);
            Files.delete(file);
        }
    }

    private static void mountTmpfs(final Path dir, final String size) throws IOException, InterruptedException
    {
        final int exit = TmpfsVolume.mount(dir, size);
        Assumptions.assumeTrue(exit == 0, "cannot mount a tmpfs here (mount exited " + exit + "; needs root): a " +
            "volume of its own for one broker is what this test is about");
    }
}
