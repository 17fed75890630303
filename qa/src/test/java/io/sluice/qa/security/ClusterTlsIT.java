package io.sluice.qa.security;

import io.sluice.protocol.codecs.AdminRequestEncoder;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.tls.TestCertificates;
import io.sluice.protocol.tls.TlsFiles;
import io.sluice.protocol.transport.FrameDescriptor;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.PeerUnreachableException;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import io.sluice.qa.Exporting;
import io.sluice.qa.Records;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 16: a cluster of separate JVMs with {@code sluice.cluster.tls.*} on, certificates made with openssl at
 * run time. Brokers take commands only from peers with a certificate of the cluster's CA, replicate among
 * themselves over mutual TLS, and use replaced certificate files for new connections.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class ClusterTlsIT
{
    private static final String TOKEN = "qa-tls-token";
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(20);

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    private Path certificates;
    private TestCertificates ca;
    private TestCertificates otherCa;
    private TlsFiles broker0;
    private Path broker2Trust;
    private SluiceCluster cluster;

    @BeforeAll
    void startTlsCluster() throws IOException
    {
        certificates = RUN.directory().resolve("certificates");
        ca = TestCertificates.authority(certificates, "cluster");
        otherCa = TestCertificates.authority(certificates, "other");
        broker0 = ca.issue("broker-0");
        final TlsFiles broker1 = ca.issue("broker-1");
        final TlsFiles broker2 = ca.issue("broker-2");
        final TlsFiles gateway = ca.issue("gateway");
        // Broker 2 has its own copy of the trusted bundle: the last case gives it another CA.
        broker2Trust = Files.copy(ca.certificate(), certificates.resolve("broker-2-trusted.pem"));
        cluster = RUN.cluster("cluster", builder ->
        {
            builder.partitions(3).token(TOKEN)
                .property(TlsFiles.ENABLED_SETTING, "true")
                .property(TlsFiles.TRUSTED_CERTIFICATES_SETTING, ca.certificate().toString())
                .gatewayProperty(TlsFiles.CERTIFICATE_SETTING, gateway.certificate().toString())
                .gatewayProperty(TlsFiles.PRIVATE_KEY_SETTING, gateway.privateKey().toString());
            final List<TlsFiles> brokers = List.of(broker0, broker1, broker2);
            for (int b = 0; b < brokers.size(); b++)
            {
                builder.brokerProperty(b, TlsFiles.CERTIFICATE_SETTING, brokers.get(b).certificate().toString())
                    .brokerProperty(b, TlsFiles.PRIVATE_KEY_SETTING, brokers.get(b).privateKey().toString());
            }
            builder.brokerProperty(2, TlsFiles.TRUSTED_CERTIFICATES_SETTING, broker2Trust.toString());
        });
        cluster.start();
        cluster.awaitReady();
        cluster.awaitLeaders();
    }

    @Test
    @Order(1)
    void aTlsClusterTakesRecordsAndPausesAndResumesWith200()
    {
        final List<WrittenRecord> written = Records.write(cluster, "tls", 30);
        Records.awaitExported(cluster, written);

        assertThat(Exporting.until200("pause", () -> cluster.client().pause()).status()).isEqualTo(200);
        Exporting.awaitClusterState(cluster, "PAUSED");
        assertThat(Exporting.until200("resume", () -> cluster.client().resume()).status()).isEqualTo(200);
        Exporting.awaitClusterState(cluster, "EXPORTING");

        final String health = cluster.client().management("GET", "/actuator/health", null).body();
        assertThat(health).contains("\"clusterTls\"").contains("CN=gateway").contains("\"expiringWithin7Days\":[]");
    }

    @Test
    @Order(2)
    void aPlainTcpClientSendingAWellFormedPauseFrameIsDisconnectedAndChangesNothing() throws Exception
    {
        final InetSocketAddress broker = cluster.brokerCommandAddress(0);
        try (Socket raw = new Socket(broker.getAddress(), broker.getPort()))
        {
            raw.setSoTimeout((int)CLOSE_TIMEOUT.toMillis());
            raw.getOutputStream().write(pauseFrame(0, 1, nowMicros()));
            raw.getOutputStream().flush();
            assertClosedByServer(raw);
        }

        Await.quietPeriod("a refused frame must not pause anything", Duration.ofSeconds(2));
        final ExportingStatus status = cluster.client().exporting();
        assertThat(status.state()).as("%s", status).isEqualTo("EXPORTING");
        assertThat(cluster.broker(0).log()).contains("TLS handshake refused: not an SSL/TLS record");
    }

    @Test
    @Order(3)
    void aClientWithACertificateFromAnotherCaIsRefusedInTheHandshake() throws Exception
    {
        final TlsFiles intruder = otherCa.issue("intruder");
        // It trusts the cluster's CA, so it would accept the broker: its own certificate is what gets it refused.
        final ClusterTls tls = ClusterTls.load(new TlsFiles(intruder.certificate(), intruder.privateKey(), ca.certificate()));
        try (TransportClient client = new TransportClient(TransportConfig.defaults(), tls))
        {
            final byte[] frame = pauseFrame(0, 1, nowMicros());
            final UnsafeBuffer message = new UnsafeBuffer(frame, FrameDescriptor.HEADER_LENGTH,
                frame.length - FrameDescriptor.HEADER_LENGTH);
            assertThatThrownBy(() -> client.send(cluster.brokerCommandAddress(0),
                MessageWriter.of(message, 0, message.capacity()), Duration.ofSeconds(10)).get(20, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(PeerUnreachableException.class);
        }

        Await.quietPeriod("a refused client must not pause anything", Duration.ofSeconds(2));
        assertThat(cluster.client().exporting().state()).isEqualTo("EXPORTING");
        assertThat(cluster.broker(0).log()).contains("refused the client certificate CN=intruder issued by CN=other test CA");
    }

    @Test
    @Order(4)
    void certificateFilesReplacedWhileRunningAreUsedForNewConnections() throws Exception
    {
        assertThat(presentedBy(cluster.brokerCommandAddress(0)).getSubjectX500Principal().getName())
            .isEqualTo("CN=broker-0");

        TestCertificates.replace(broker0, ca.issue("broker-0-renewed"));

        final X509Certificate renewed = Await.value("broker 0 to present its renewed certificate", Duration.ofSeconds(30),
            () ->
            {
                try
                {
                    final X509Certificate presented = presentedBy(cluster.brokerCommandAddress(0));
                    return presented.getSubjectX500Principal().getName().equals("CN=broker-0-renewed") ?
                        java.util.Optional.of(presented) : java.util.Optional.empty();
                }
                catch (final IOException e)
                {
                    return java.util.Optional.empty();
                }
            });
        assertThat(renewed.getIssuerX500Principal().getName()).isEqualTo("CN=cluster test CA");
        // The cluster keeps working across the rotation, Raft connections included.
        assertThat(Exporting.until200("pause", () -> cluster.client().pause()).status()).isEqualTo(200);
        assertThat(Exporting.until200("resume", () -> cluster.client().resume()).status()).isEqualTo(200);
    }

    @Test
    @Order(5)
    void aBrokerWithACertificateFromAnotherCaCannotJoinItsRaftGroupsAndTheOthersSayWhy() throws Exception
    {
        cluster.stopBroker(2);
        final TlsFiles stranger = otherCa.issue("broker-2");
        final TlsFiles broker2 = new TlsFiles(
            certificates.resolve("cluster-broker-2.pem"), certificates.resolve("cluster-broker-2.key"), broker2Trust);
        TestCertificates.replace(broker2, new TlsFiles(stranger.certificate(), stranger.privateKey(),
            otherCa.certificate()));
        cluster.startBroker(2);
        cluster.log("broker 2 restarted with a certificate of another CA, trusting only that CA");

        final List<WrittenRecord> written = Records.write(cluster, "without-broker-2", 30);
        Records.awaitExported(cluster, written);
        Await.until("broker 0 or 1 to log why it refused broker 2", Duration.ofSeconds(60), () ->
            (cluster.broker(0).log() + cluster.broker(1).log()).contains("certificate CN=broker-2 issued by CN=other test CA"));
        Await.until("broker 2 to log why it refused the others", Duration.ofSeconds(60), () ->
            cluster.broker(2).log().contains("issued by CN=cluster test CA: not signed by a CA in"));
        assertThat(cluster.isBrokerRunning(2)).isTrue();

        // The others stay healthy: every partition has a leader, and pauses of their pairs succeed.
        assertThat(cluster.client().isReady()).isTrue();
        final ExportingStatus status = cluster.client().exporting();
        for (int p = 1; p <= cluster.partitionCount(); p++)
        {
            assertThat(status.leaderOf(p)).as("leader of partition %d in %s", p, status).isPresent()
                .get().isNotEqualTo(2);
        }
        assertThat(cluster.client().exportingControl("pause", cluster.pairsOf(0)).status()).isEqualTo(200);
        assertThat(cluster.client().exportingControl("resume", cluster.pairsOf(0)).status()).isEqualTo(200);
    }

    /** The certificate a broker's command port presents to a client of the cluster's CA, in a new handshake. */
    private X509Certificate presentedBy(final InetSocketAddress broker) throws IOException
    {
        final ClusterTls probe = ClusterTls.load(ca.issue("probe-" + System.nanoTime()));
        try
        {
            final SSLContext context = SSLContext.getInstance("TLSv1.3");
            context.init(new KeyManager[]{probe.keyManager()}, new TrustManager[]{probe.trustManager()}, null);
            try (SSLSocket socket = (SSLSocket)context.getSocketFactory().createSocket(broker.getAddress(), broker.getPort()))
            {
                socket.setSoTimeout(10_000);
                socket.startHandshake();
                return (X509Certificate)socket.getSession().getPeerCertificates()[0];
            }
        }
        catch (final java.security.GeneralSecurityException e)
        {
            throw new IOException(e);
        }
    }

    private static byte[] pauseFrame(final int brokerId, final int partitionId, final long version)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[128]);
        final AdminRequestEncoder encoder = new AdminRequestEncoder()
            .wrapAndApplyHeader(buffer, FrameDescriptor.HEADER_LENGTH, new MessageHeaderEncoder())
            .brokerId(brokerId).partitionId(partitionId).kind(AdminRequestKind.PAUSE_EXPORTING).version(version)
            .leaderTargeted(BooleanType.FALSE);
        final int messageLength = MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
        final ByteBuffer frame = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH + messageLength)
            .order(ByteOrder.LITTLE_ENDIAN);
        frame.putInt(FrameDescriptor.frameLength(messageLength)).putLong(42);
        final byte[] bytes = frame.array();
        buffer.getBytes(FrameDescriptor.HEADER_LENGTH, bytes, FrameDescriptor.HEADER_LENGTH, messageLength);
        return bytes;
    }

    private static long nowMicros()
    {
        final Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000L;
    }

    private static void assertClosedByServer(final Socket socket) throws IOException
    {
        final InputStream in = socket.getInputStream();
        try
        {
            while (in.read() != -1)
            {
                // whatever a TLS server sends before it closes (nothing, or an alert)
            }
        }
        catch (final SocketTimeoutException e)
        {
            throw new AssertionError("the broker did not close the connection within " + CLOSE_TIMEOUT, e);
        }
        catch (final IOException reset)
        {
            // reset: closed as well
        }
    }
}
