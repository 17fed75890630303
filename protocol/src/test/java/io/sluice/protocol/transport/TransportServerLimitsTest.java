package io.sluice.protocol.transport;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.sluice.protocol.transport.TransportClientTest.addressOf;
import static io.sluice.protocol.transport.TransportClientTest.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** What strangers can hold on a server port: connections, silent sockets and half-sent frames are bounded. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TransportServerLimitsTest
{
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private final TransportConfig config = TransportConfig.defaults();
    private final List<Socket> sockets = new ArrayList<>();
    private TransportServer server;
    private TransportClient client;

    @AfterEach
    void stop() throws IOException
    {
        for (final Socket socket : sockets)
        {
            socket.close();
        }
        if (client != null)
        {
            client.close();
        }
        if (server != null)
        {
            server.close();
        }
    }

    @Test
    void aSocketThatNeverSendsAFrameIsClosedAfterTheFrameTimeoutWhileAnIdleClientStaysConnected() throws Exception
    {
        start(new ConnectionLimits(16, 1024 * 1024, Duration.ofMillis(600)));
        assertServes();
        final Socket silent = rawSocket();
        final long start = System.nanoTime();

        assertClosedByServer(silent);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
        // The client's connection completed a frame and owes none: idle is not timed out (the closed socket leaves
        // the server's count a moment after the client saw it closed).
        await().atMost(Duration.ofSeconds(5)).until(() -> server.connectionCount() == 1);
        Thread.sleep(1_000);
        assertThat(server.connectionCount()).isEqualTo(1);
        assertServes();
    }

    @Test
    void aFrameLeftHalfSentIsClosedAfterTheFrameTimeout() throws Exception
    {
        start(new ConnectionLimits(16, 1024 * 1024, Duration.ofMillis(600)));
        final Socket half = rawSocket();
        half.getOutputStream().write(lengthPrefix(1000));
        half.getOutputStream().write(new byte[100]);
        half.getOutputStream().flush();
        await().atMost(Duration.ofSeconds(5)).until(() -> server.bufferedBytes() == 104);

        assertClosedByServer(half);
        await().atMost(Duration.ofSeconds(5)).until(() -> server.bufferedBytes() == 0);
        assertServes();
    }

    @Test
    void connectionsBeyondTheMaximumAreClosedAtOnce() throws Exception
    {
        start(new ConnectionLimits(3, 1024 * 1024, Duration.ofSeconds(30)));
        for (int i = 0; i < 3; i++)
        {
            rawSocket();
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> server.connectionCount() == 3);

        final Socket fourth = rawSocket();
        assertClosedByServer(fourth);
        assertThat(server.connectionCount()).isEqualTo(3);

        sockets.get(0).close();
        await().atMost(Duration.ofSeconds(5)).until(() -> server.connectionCount() == 2);
        assertServes();
    }

    @Test
    void aPartialFrameBeyondTheBufferedBoundClosesItsConnectionOnly() throws Exception
    {
        start(new ConnectionLimits(16, 64 * 1024, Duration.ofSeconds(30)));
        final Socket first = rawSocket();
        first.getOutputStream().write(lengthPrefix(1024 * 1024));
        first.getOutputStream().write(new byte[40 * 1024]);
        first.getOutputStream().flush();
        await().atMost(Duration.ofSeconds(5)).until(() -> server.bufferedBytes() == 40 * 1024 + 4);

        final Socket second = rawSocket();
        second.getOutputStream().write(lengthPrefix(1024 * 1024));
        second.getOutputStream().write(new byte[40 * 1024]);
        second.getOutputStream().flush();

        assertClosedByServer(second);
        await().atMost(Duration.ofSeconds(5)).until(() -> server.bufferedBytes() == 40 * 1024 + 4);
        assertThat(first.isClosed()).isFalse();
        assertServes();
    }

    private void start(final ConnectionLimits limits)
    {
        server = TransportServer.start(new InetSocketAddress("127.0.0.1", 0), Echo.HANDLER, config, limits);
        client = new TransportClient(config);
    }

    private void assertServes() throws Exception
    {
        final DirectBuffer answer = client.send(addressOf(server), text("still serving"), TIMEOUT)
            .get(20, TimeUnit.SECONDS);
        assertThat(answer.getStringWithoutLengthUtf8(0, answer.capacity())).isEqualTo("still serving");
    }

    private Socket rawSocket() throws IOException
    {
        final Socket socket = new Socket("127.0.0.1", server.localAddress().getPort());
        socket.setSoTimeout(10_000);
        sockets.add(socket);
        return socket;
    }

    private static byte[] lengthPrefix(final int length)
    {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(length).array();
    }

    /** The server closed the socket: reads end (EOF or reset) instead of timing out. */
    private static void assertClosedByServer(final Socket socket) throws IOException
    {
        final InputStream in = socket.getInputStream();
        try
        {
            int read;
            do
            {
                read = in.read();
            }
            while (read != -1);
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
