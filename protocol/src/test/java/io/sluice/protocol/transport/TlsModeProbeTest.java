package io.sluice.protocol.transport;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.tls.TestCertificates;
import io.sluice.protocol.tls.TlsModeProbe;
import io.sluice.protocol.tls.TlsModeProbe.Mode;
import io.sluice.protocol.tls.TlsModeProbe.Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The startup probe tells a TLS command port from a plain one, and takes silence or absence for neither. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TlsModeProbeTest
{
    @TempDir
    Path dir;

    @Test
    void aTlsServerAnswersAsTls() throws IOException
    {
        try (TransportServer server = tlsServer())
        {
            assertThat(TlsModeProbe.probe(unresolved(server), deadline(Duration.ofSeconds(5)))).isEqualTo(Mode.TLS);
        }
    }

    @Test
    void aPlainServerAnswersAsPlain()
    {
        try (TransportServer server = plainServer())
        {
            assertThat(TlsModeProbe.probe(unresolved(server), deadline(Duration.ofSeconds(5)))).isEqualTo(Mode.PLAIN);
        }
    }

    @Test
    void aClosedPortOrASilentServerIsUnknown() throws IOException
    {
        final InetSocketAddress closed;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            closed = new InetSocketAddress("127.0.0.1", socket.getLocalPort());
        }
        assertThat(TlsModeProbe.probe(closed, deadline(Duration.ofSeconds(5)))).isEqualTo(Mode.UNKNOWN);

        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            final long start = System.nanoTime();
            assertThat(TlsModeProbe.probe(new InetSocketAddress("127.0.0.1", silent.getLocalPort()),
                deadline(Duration.ofMillis(300)))).isEqualTo(Mode.UNKNOWN);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
        }
    }

    @Test
    void aPlainProcessRefusesATlsPeerNamingTheSettingAndThePeer() throws IOException
    {
        try (TransportServer server = tlsServer())
        {
            final Peer peer = new Peer(unresolved(server), "broker 1 at " + describe(server));
            assertThatThrownBy(() -> TlsModeProbe.check(false, "broker 0", List.of(peer), Duration.ofSeconds(5)))
                .isInstanceOf(InvalidClusterConfigException.class)
                .hasMessage("sluice.cluster.tls.enabled: false on broker 0, but broker 1 at " + describe(server) +
                    " answers with TLS: set it the same on every broker and gateway");
            TlsModeProbe.check(true, "broker 0", List.of(peer), Duration.ofSeconds(5));
        }
    }

    @Test
    void aTlsProcessRefusesAPlainPeerNamingTheSettingAndThePeer()
    {
        try (TransportServer server = plainServer())
        {
            final Peer peer = new Peer(unresolved(server), "broker 2 at " + describe(server));
            assertThatThrownBy(() -> TlsModeProbe.check(true, "the gateway", List.of(peer), Duration.ofSeconds(5)))
                .isInstanceOf(InvalidClusterConfigException.class)
                .hasMessage("sluice.cluster.tls.enabled: true on the gateway, but broker 2 at " + describe(server) +
                    " answers without TLS: set it the same on every broker and gateway");
            TlsModeProbe.check(false, "the gateway", List.of(peer), Duration.ofSeconds(5));
        }
    }

    @Test
    void peersThatAreDownOrSilentDoNotStopTheStartAndCostAtMostTheBudget() throws IOException
    {
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            final int down;
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
            {
                down = socket.getLocalPort();
            }
            final List<Peer> peers = List.of(
                new Peer(InetSocketAddress.createUnresolved("127.0.0.1", down), "broker 1"),
                new Peer(InetSocketAddress.createUnresolved("127.0.0.1", silent.getLocalPort()), "broker 2"));
            final long start = System.nanoTime();
            TlsModeProbe.check(true, "broker 0", peers, Duration.ofMillis(500));
            TlsModeProbe.check(false, "broker 0", peers, Duration.ofMillis(500));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
        }
    }

    @Test
    void aPlainServerClosesAProbeQuietlyButStillLogsAMisconfiguredTlsPeer() throws Exception
    {
        final Logger logger = (Logger)LoggerFactory.getLogger(TransportServer.class);
        final ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        logger.addAppender(log);
        try (TransportServer server = plainServer())
        {
            assertThat(TlsModeProbe.probe(unresolved(server), deadline(Duration.ofSeconds(5)))).isEqualTo(Mode.PLAIN);
            assertThat(misconfiguredPeerLines(log)).isZero();

            // A peer that turns TLS on later, while this one runs: its connection is refused and logged as before.
            try (TransportClient client = new TransportClient(TransportConfig.defaults(),
                ClusterTls.load(TestCertificates.authority(dir, "cluster").issue("gateway"))))
            {
                assertThatThrownBy(() -> client.send(TransportClientTest.addressOf(server),
                    TransportClientTest.text("hello"), Duration.ofSeconds(10)).get(20, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class);
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> misconfiguredPeerLines(log) == 1);
        }
        finally
        {
            logger.detachAppender(log);
        }
    }

    private static long misconfiguredPeerLines(final ListAppender<ILoggingEvent> log)
    {
        synchronized (log) // AppenderBase appends under its own lock
        {
            return log.list.stream()
                .filter(event -> event.getFormattedMessage().contains("the peer opened a TLS handshake")).count();
        }
    }

    private TransportServer tlsServer() throws IOException
    {
        final ClusterTls tls = ClusterTls.load(TestCertificates.authority(dir, "cluster").issue("broker-1"));
        return TransportServer.start(new InetSocketAddress("127.0.0.1", 0), Echo.HANDLER, TransportConfig.defaults(),
            ConnectionLimits.defaults(), tls);
    }

    private static TransportServer plainServer()
    {
        return TransportServer.start(new InetSocketAddress("127.0.0.1", 0), Echo.HANDLER, TransportConfig.defaults());
    }

    /** As the distribution hands addresses out: unresolved. */
    private static InetSocketAddress unresolved(final TransportServer server)
    {
        return InetSocketAddress.createUnresolved("127.0.0.1", server.localAddress().getPort());
    }

    private static String describe(final TransportServer server)
    {
        return "127.0.0.1:" + server.localAddress().getPort();
    }

    private static long deadline(final Duration in)
    {
        return System.nanoTime() + in.toNanos();
    }
}
