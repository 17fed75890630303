package io.sluice.broker;

import io.sluice.testing.QuietPeriod;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.AppendResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.tls.TestCertificates;
import io.sluice.protocol.transport.PeerUnreachableException;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import org.agrona.DirectBuffer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Brokers with cluster TLS: Raft over gRPC with mutual TLS, and the command port for TLS clients only. */
class BrokerTlsIT
{
    private static final int PARTITION = 1;

    @TempDir
    Path dataDir;

    @TempDir
    Path certificates;

    @AutoClose
    private TestCluster cluster;

    @AutoClose
    private TransportClient client;

    @Test
    @Timeout(120)
    void aTlsClusterReplicatesAndServesTlsClientsOnly() throws Exception
    {
        final TestCertificates ca = TestCertificates.authority(certificates, "cluster");
        cluster = new TestCluster(dataDir, 3, 1, 3, UnaryOperator.identity());
        for (int b = 0; b < 3; b++)
        {
            cluster.startBroker(b, ClusterTls.load(ca.issue("broker-" + b)));
        }
        final int leader = cluster.awaitLeader(PARTITION);
        client = new TransportClient(TransportConfig.defaults(), ClusterTls.load(ca.issue("gateway")));

        final DirectBuffer appended = client.send(cluster.address(leader),
            TestCluster.appendRequest(PARTITION, List.of("k1", "k2"), List.of("{\"n\":1}", "{\"n\":2}")),
            TestCluster.REQUEST_TIMEOUT).get(30, TimeUnit.SECONDS);
        assertThat(new MessageHeaderDecoder().wrap(appended, 0).templateId()).isEqualTo(AppendResponseDecoder.TEMPLATE_ID);
        cluster.awaitExported(PARTITION, 2);
        // Replicated to every broker over TLS.
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
        {
            for (int b = 0; b < 3; b++)
            {
                assertThat(cluster.brokers[b].partition(PARTITION).state().lastPosition()).isEqualTo(2L);
            }
        });
        client.send(cluster.address(leader), TestCluster.adminRequest(leader, PARTITION,
            AdminRequestKind.PAUSE_EXPORTING, 1), TestCluster.REQUEST_TIMEOUT).get(30, TimeUnit.SECONDS);
        assertThat(cluster.brokers[leader].partition(PARTITION).exporting().version()).isEqualTo(1L);

        // The plain client of the other tests is refused.
        assertThatThrownBy(() -> cluster.client.send(cluster.address(leader), TestCluster.adminRequest(leader, PARTITION,
            AdminRequestKind.RESUME_EXPORTING, 2), TestCluster.REQUEST_TIMEOUT).get(30, TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(PeerUnreachableException.class);
        assertThat(cluster.brokers[leader].partition(PARTITION).exporting().version()).isEqualTo(1L);
        assertThat(cluster.brokers[leader].certificateExpiresSoon()).isFalse();
    }

    @Test
    @Timeout(120)
    void aBrokerWithACertificateFromAnotherCaCannotJoinItsRaftGroups() throws Exception
    {
        final TestCertificates ca = TestCertificates.authority(certificates, "cluster");
        final TestCertificates other = TestCertificates.authority(certificates, "other");
        cluster = new TestCluster(dataDir, 3, 1, 3, UnaryOperator.identity());
        cluster.startBroker(0, ClusterTls.load(ca.issue("broker-0")));
        cluster.startBroker(1, ClusterTls.load(ca.issue("broker-1")));
        cluster.startBroker(2, ClusterTls.load(other.issue("broker-2", 3)));
        final int leader = cluster.awaitLeader(PARTITION);
        assertThat(leader).isNotEqualTo(2);
        client = new TransportClient(TransportConfig.defaults(), ClusterTls.load(ca.issue("gateway")));

        client.send(cluster.address(leader), TestCluster.appendRequest(PARTITION, List.of("k"), List.of("{}")),
            TestCluster.REQUEST_TIMEOUT).get(30, TimeUnit.SECONDS);
        cluster.awaitExported(PARTITION, 1);
        QuietPeriod.of(Duration.ofSeconds(3), "the broker of another CA receives nothing");
        assertThat(cluster.brokers[2].partition(PARTITION).state().lastPosition()).isZero();
        assertThat(cluster.brokers[2].partition(PARTITION).status().role()).isNotEqualTo(PartitionRole.LEADER);
        assertThat(cluster.brokers[2].certificateExpiresSoon()).isTrue();
    }
}
