package io.sluice.qa.chaos;

import io.sluice.qa.cluster.ExportedRecord;
import io.sluice.qa.cluster.GatewayException;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import io.sluice.qa.network.NamespacedHosts;
import io.sluice.qa.network.NetworkLab;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 31: brokers and the gateway each in a network namespace of their own, talking over a bridge. A broker cut off
 * from the others and the gateway by nftables loses its leaderships; writes go on through the others; healed, it
 * rejoins, and every acknowledged record is exported. The lab leaves nothing behind.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class BrokersOnHostsOfTheirOwnIT
{
    @RegisterExtension
    static final QaRun RUN = new QaRun();

    private static NetworkLab lab;
    private static SluiceCluster cluster;

    @BeforeAll
    static void startInNamespaces()
    {
        final var reason = NetworkLab.unavailableReason();
        Assumptions.assumeTrue(reason.isEmpty(), () -> "skipped: " + reason.orElse(""));
        lab = NetworkLab.create(RUN.directory(), NamespacedHosts.hostNames(3));
        cluster = RUN.cluster("cluster", builder -> builder.partitions(3).token("chaos")
            .requestTimeout(Duration.ofSeconds(2)).hosts(new NamespacedHosts(lab)));
        cluster.start();
        cluster.awaitReady();
        cluster.awaitLeaders();
        // The test isolates partition 1's leader: it must not be moving home (automatic balance) when it is read.
        cluster.awaitPreferredLeaders();
    }

    @AfterAll
    static void removeTheLab()
    {
        if (cluster != null)
        {
            cluster.close();
        }
        if (lab != null)
        {
            lab.close();
            assertThat(lab.leftBehind()).as("a namespace or link of the lab left behind").isFalse();
            assertThat(Files.exists(RUN.directory().resolve("network"))).as("the lab's record of what it made").isFalse();
        }
    }

    @Test
    void anIsolatedBrokerLosesItsLeadershipsAndNoAcknowledgedRecordIsLost()
    {
        assertThat(cluster.brokerList()).doesNotContain("127.0.0.1").contains(lab.address("b0").getHostAddress());
        final List<WrittenRecord> written = new ArrayList<>();
        for (int i = 0; i < 30; i++)
        {
            written.add(cluster.client().write("before-" + i, "{\"i\":" + i + "}"));
        }
        final int leader = cluster.client().exporting().leaderOf(1).orElseThrow();
        final List<String> others = new ArrayList<>(lab.hostNames());
        others.remove(NamespacedHosts.broker(leader));
        lab.partition(List.of(NamespacedHosts.broker(leader)), others);

        final long deadline = System.nanoTime() + SluiceCluster.FAILOVER_TIMEOUT.toNanos();
        int after = 0;
        while (after < 30)
        {
            assertThat(System.nanoTime() - deadline).as("writes acknowledged without broker " + leader).isNegative();
            try
            {
                written.add(cluster.client().write("after-" + after, "{\"i\":" + after + "}"));
                after++;
            }
            catch (final GatewayException ex)
            {
                // no leader for this key's partition yet: the isolated broker's term has to lapse
            }
        }
        lab.heal();
        cluster.awaitBrokerAvailable(leader);

        io.sluice.qa.cluster.Await.until("every acknowledged record exported", SluiceCluster.FAILOVER_TIMEOUT, () ->
            written.stream().allMatch(record -> cluster.exportedRecords(record.partitionId()).stream()
                .map(ExportedRecord::position).anyMatch(p -> p == record.position())));
    }
}
