package io.sluice.protocol.transport;

import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import org.agrona.DirectBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static io.sluice.protocol.transport.TransportClientTest.addressOf;
import static io.sluice.protocol.transport.TransportClientTest.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TransportServerTest
{
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private final TransportConfig config = TransportConfig.defaults();
    private TransportServer server;
    private TransportClient client;

    @BeforeEach
    void start()
    {
        server = TransportServer.start(new InetSocketAddress("127.0.0.1", 0), Echo.HANDLER, config);
        client = new TransportClient(config);
    }

    @AfterEach
    void stop()
    {
        client.close();
        server.close();
    }

    @Test
    void bindingAPortInUseFailsNamingTheAddress()
    {
        final int port = server.localAddress().getPort();
        assertThatThrownBy(() -> TransportServer.start(new InetSocketAddress("127.0.0.1", port), Echo.HANDLER, config))
            .isInstanceOf(TransportException.class)
            .hasMessageContaining("127.0.0.1:" + port);
    }

    @Test
    void bindsAnUnresolvedAddressAndNamesAnUnknownHost() throws Exception
    {
        try (TransportServer fromConfig = TransportServer.start(
            InetSocketAddress.createUnresolved("localhost", 0), Echo.HANDLER, config))
        {
            assertThat(fromConfig.localAddress().getAddress().isLoopbackAddress()).isTrue();
            assertThat(client.send(addressOf(fromConfig), text("ok"), TIMEOUT).get(20, TimeUnit.SECONDS).capacity())
                .isEqualTo(2);
        }
        assertThatThrownBy(() -> TransportServer.start(
            InetSocketAddress.createUnresolved("no-such-host.invalid", 26501), Echo.HANDLER, config))
            .isInstanceOf(TransportException.class)
            .hasMessageContaining("no-such-host.invalid:26501");
    }

    @Test
    void garbageBytesCloseOnlyThatConnection() throws Exception
    {
        assertServes();
        final byte[] garbage = new byte[4096];
        new Random(42).nextBytes(garbage);
        try (Socket raw = rawSocket())
        {
            raw.getOutputStream().write(garbage);
            raw.getOutputStream().flush();
            assertClosedByServer(raw);
        }
        assertServes();
    }

    @Test
    void oversizeFrameIsRefusedAndTheConnectionClosed() throws Exception
    {
        try (Socket raw = rawSocket())
        {
            raw.getOutputStream().write(lengthPrefix(config.maxFrameLength() + 1));
            raw.getOutputStream().flush();
            assertClosedByServer(raw);
        }
        assertServes();
    }

    @Test
    void negativeAndTooShortLengthsAreRefused() throws Exception
    {
        for (final int length : new int[]{-1, Integer.MIN_VALUE, 0, FrameDescriptor.MIN_FRAME_LENGTH - 1})
        {
            try (Socket raw = rawSocket())
            {
                raw.getOutputStream().write(lengthPrefix(length));
                raw.getOutputStream().write(new byte[16]);
                raw.getOutputStream().flush();
                assertClosedByServer(raw);
            }
        }
        assertServes();
    }

    @Test
    void halfAFrameThenSilenceDoesNotBlockOthers() throws Exception
    {
        try (Socket raw = rawSocket())
        {
            raw.getOutputStream().write(lengthPrefix(1000));
            raw.getOutputStream().write(new byte[100]);
            raw.getOutputStream().flush();
            assertServes();
        }
        assertServes();
    }

    @Test
    void rawClientGetsItsCorrelationIdBack() throws Exception
    {
        try (Socket raw = rawSocket())
        {
            final ByteBuffer frame = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH + 3).order(ByteOrder.LITTLE_ENDIAN);
            frame.putInt(FrameDescriptor.frameLength(3)).putLong(0x1122334455667788L).put(new byte[]{7, 8, 9});
            raw.getOutputStream().write(frame.array());
            raw.getOutputStream().flush();

            final byte[] answer = new byte[FrameDescriptor.HEADER_LENGTH + 3];
            new DataInputStream(raw.getInputStream()).readFully(answer);
            final ByteBuffer read = ByteBuffer.wrap(answer).order(ByteOrder.LITTLE_ENDIAN);
            assertThat(read.getInt(FrameDescriptor.FRAME_LENGTH_OFFSET)).isEqualTo(FrameDescriptor.frameLength(3));
            assertThat(read.getLong(FrameDescriptor.CORRELATION_ID_OFFSET)).isEqualTo(0x1122334455667788L);
            assertThat(answer[FrameDescriptor.MESSAGE_OFFSET + 2]).isEqualTo((byte)9);
        }
    }

    @Test
    void handlerThatThrowsGetsAnInternalErrorAnswerAndTheServerKeepsServing() throws Exception
    {
        try (TransportServer throwing = TransportServer.start(new InetSocketAddress("127.0.0.1", 0),
            (buffer, offset, length, response) ->
            {
                throw new IllegalStateException("boom on " + length + " bytes");
            }, config))
        {
            for (int i = 0; i < 2; i++)
            {
                final DirectBuffer answer = client.send(addressOf(throwing), text("xyz"), TIMEOUT)
                    .get(20, TimeUnit.SECONDS);
                final MessageHeaderDecoder header = new MessageHeaderDecoder();
                final ErrorResponseDecoder error = new ErrorResponseDecoder().wrapAndApplyHeader(answer, 0, header);
                assertThat(header.templateId()).isEqualTo(ErrorResponseDecoder.TEMPLATE_ID);
                assertThat(error.code()).isEqualTo(ErrorCode.INTERNAL_ERROR);
                assertThat(error.message()).contains("boom on 3 bytes");
            }
        }
    }

    @Test
    void onlyTheFirstAnswerCountsAndAWriterThatThrowsLeavesRoomForAnErrorAnswer() throws Exception
    {
        final MessageWriter broken = new MessageWriter()
        {
            public int encodedLength()
            {
                return 16;
            }

            public void write(final org.agrona.MutableDirectBuffer buffer, final int offset)
            {
                throw new IllegalStateException("encoder bug");
            }
        };
        try (TransportServer twice = TransportServer.start(new InetSocketAddress("127.0.0.1", 0),
            (buffer, offset, length, response) ->
            {
                if (length == 1)
                {
                    response.respond(broken);
                }
                response.respond(text("first"));
                response.respond(text("second"));
            }, config))
        {
            final DirectBuffer answer = client.send(addressOf(twice), text("xy"), TIMEOUT).get(20, TimeUnit.SECONDS);
            assertThat(answer.getStringWithoutLengthUtf8(0, answer.capacity())).isEqualTo("first");

            final DirectBuffer error = client.send(addressOf(twice), text("x"), TIMEOUT).get(20, TimeUnit.SECONDS);
            final ErrorResponseDecoder decoder =
                new ErrorResponseDecoder().wrapAndApplyHeader(error, 0, new MessageHeaderDecoder());
            assertThat(decoder.code()).isEqualTo(ErrorCode.INTERNAL_ERROR);
            assertThat(decoder.message()).contains("encoder bug");
        }
    }

    @Test
    void closeDisconnectsClientsAndReleasesThePort() throws Exception
    {
        assertServes();
        assertThat(server.connectionCount()).isEqualTo(1);
        final int port = server.localAddress().getPort();

        final long start = System.nanoTime();
        server.close();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(10_000);
        await().atMost(Duration.ofSeconds(10)).until(() -> !client.isConnected(addressOf(server)));

        server = TransportServer.start(new InetSocketAddress("127.0.0.1", port), Echo.HANDLER, config);
        assertThat(server.localAddress().getPort()).isEqualTo(port);
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
