package io.sluice.protocol.transport;

import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.tls.TestCertificates;
import io.sluice.protocol.tls.TlsFiles;
import org.agrona.DirectBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.sluice.protocol.transport.TransportClientTest.addressOf;
import static io.sluice.protocol.transport.TransportClientTest.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Mutual TLS on the transport: only peers with a certificate from a trusted CA get a frame read. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TransportTlsTest
{
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private final TransportConfig config = TransportConfig.defaults();
    private final AtomicInteger requests = new AtomicInteger();
    private TestCertificates ca;
    private TlsFiles serverFiles;
    private TransportServer server;

    @BeforeEach
    void start() throws IOException
    {
        ca = TestCertificates.authority(dir, "cluster");
        serverFiles = ca.issue("broker-0");
        server = TransportServer.start(new InetSocketAddress("127.0.0.1", 0), (buffer, offset, length, response) ->
        {
            requests.incrementAndGet();
            Echo.HANDLER.onRequest(buffer, offset, length, response);
        }, config, ConnectionLimits.defaults(), ClusterTls.load(serverFiles));
    }

    @AfterEach
    void stop()
    {
        server.close();
    }

    @Test
    void aClientWithACertificateFromTheTrustedCaIsServed() throws Exception
    {
        try (TransportClient client = new TransportClient(config, ClusterTls.load(ca.issue("gateway"))))
        {
            assertThat(echo(client, "over TLS")).isEqualTo("over TLS");
            assertThat(requests).hasValue(1);
        }
    }

    @Test
    void aClientWithACertificateFromAnotherCaIsRefusedInTheHandshake() throws Exception
    {
        final TestCertificates other = TestCertificates.authority(dir, "other");
        final TlsFiles stranger = other.issue("gateway");
        // It even trusts the cluster's CA: its own certificate is what the server refuses.
        final TlsFiles strangerTrustingCluster = new TlsFiles(stranger.certificate(), stranger.privateKey(),
            ca.certificate());
        try (TransportClient client = new TransportClient(config, ClusterTls.load(strangerTrustingCluster)))
        {
            assertThatThrownBy(() -> echo(client, "let me in"))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(PeerUnreachableException.class);
        }
        assertThat(requests).hasValue(0);
    }

    @Test
    void aPlainClientSendingAWellFormedFrameIsDisconnectedUnread() throws Exception
    {
        try (Socket raw = new Socket("127.0.0.1", server.localAddress().getPort()))
        {
            raw.setSoTimeout(10_000);
            final byte[] message = "pause everything".getBytes();
            final ByteBuffer frame = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH + message.length)
                .order(ByteOrder.LITTLE_ENDIAN);
            frame.putInt(FrameDescriptor.frameLength(message.length)).putLong(7).put(message);
            raw.getOutputStream().write(frame.array());
            raw.getOutputStream().flush();
            assertClosedByServer(raw);
        }
        assertThat(requests).hasValue(0);
    }

    @Test
    void aTlsClientWithoutACertificateIsRefused() throws Exception
    {
        final ClusterTls trustOnly = ClusterTls.load(ca.issue("anonymous"));
        final SSLContext context = SSLContext.getInstance("TLSv1.3");
        context.init(null, new javax.net.ssl.TrustManager[]{trustOnly.trustManager()}, null);
        try (SSLSocket socket = (SSLSocket)context.getSocketFactory().createSocket("127.0.0.1",
            server.localAddress().getPort()))
        {
            socket.setSoTimeout(10_000);
            socket.setEnabledProtocols(new String[]{"TLSv1.3"});
            // TLS 1.3: the client's handshake ends before the server checks; the refusal arrives on first use.
            assertThatThrownBy(() ->
            {
                socket.getOutputStream().write(ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN)
                    .putInt(8).putLong(1).array());
                socket.getOutputStream().flush();
                if (socket.getInputStream().read() != -1)
                {
                    throw new AssertionError("the server answered a client without a certificate");
                }
                throw new IOException("closed");
            }).isInstanceOf(IOException.class);
        }
        assertThat(requests).hasValue(0);
    }

    @Test
    void aTlsClientOfAPlainServerIsRefusedAndNothingIsHandled() throws Exception
    {
        final AtomicInteger plainRequests = new AtomicInteger();
        try (TransportServer plain = TransportServer.start(new InetSocketAddress("127.0.0.1", 0),
            (buffer, offset, length, response) -> plainRequests.incrementAndGet(), config);
             TransportClient client = new TransportClient(config, ClusterTls.load(ca.issue("gateway"))))
        {
            assertThatThrownBy(() -> client.send(addressOf(plain), text("hello"), TIMEOUT).get(20, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(PeerUnreachableException.class);
        }
        assertThat(plainRequests).hasValue(0);
    }

    @Test
    void replacedCertificateFilesAreUsedForNewConnections() throws Exception
    {
        final TestCertificates next = TestCertificates.authority(dir, "next");
        final ClusterTls oldClient = ClusterTls.load(ca.issue("gateway-old"));
        final ClusterTls newClient = ClusterTls.load(next.issue("gateway-new"));
        try (TransportClient client = new TransportClient(config, oldClient))
        {
            assertThat(echo(client, "before")).isEqualTo("before");
        }

        // The cluster moves to the next CA: the server's certificate and the CA it trusts are replaced on disk.
        TestCertificates.replace(serverFiles, next.issue("broker-0"));
        Thread.sleep(1100); // the files are looked at no more than once a second

        try (TransportClient client = new TransportClient(config, newClient))
        {
            assertThat(echo(client, "after")).isEqualTo("after");
        }
        try (TransportClient client = new TransportClient(config, oldClient))
        {
            assertThatThrownBy(() -> echo(client, "old CA"))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(PeerUnreachableException.class);
        }
    }

    private String echo(final TransportClient client, final String text) throws Exception
    {
        final DirectBuffer answer = client.send(addressOf(server), text(text), TIMEOUT).get(20, TimeUnit.SECONDS);
        return answer.getStringWithoutLengthUtf8(0, answer.capacity());
    }

    private static void assertClosedByServer(final Socket socket) throws IOException
    {
        final InputStream in = socket.getInputStream();
        try
        {
            while (in.read() != -1)
            {
                // a TLS alert may come first
            }
        }
        catch (final SocketTimeoutException e)
        {
            throw new AssertionError("server did not close the connection", e);
        }
        catch (final IOException reset)
        {
            // connection reset: closed too
        }
    }
}
