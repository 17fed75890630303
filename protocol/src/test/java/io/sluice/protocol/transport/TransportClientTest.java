package io.sluice.protocol.transport;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

@Timeout(value = 90, unit = TimeUnit.SECONDS)
class TransportClientTest
{
    private static final Duration LONG_TIMEOUT = Duration.ofSeconds(30);
    private static final RequestHandler NEVER_ANSWERS = (buffer, offset, length, response) -> { };

    private final TransportConfig config = TransportConfig.defaults();
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception
    {
        for (int i = toClose.size() - 1; i >= 0; i--)
        {
            toClose.get(i).close();
        }
    }

    @Test
    void echoesBytesThroughServerAndBack() throws Exception
    {
        final TransportServer server = start(Echo.HANDLER, 0);
        final TransportClient client = client(config);

        final DirectBuffer answer = client.send(addressOf(server), text("hello sluice"), LONG_TIMEOUT)
            .get(20, TimeUnit.SECONDS);

        assertThat(answer.getStringWithoutLengthUtf8(0, answer.capacity())).isEqualTo("hello sluice");
        assertThat(client.isConnected(addressOf(server))).isTrue();
        assertThat(client.pendingRequests(addressOf(server))).isZero();
    }

    @Test
    void answersFromAnotherThreadLaterReachTheRightRequest() throws Exception
    {
        final ExecutorService answering = Executors.newFixedThreadPool(4);
        toClose.add(answering::shutdownNow);
        final TransportServer server = start((buffer, offset, length, response) ->
        {
            final byte[] copy = new byte[length];
            buffer.getBytes(offset, copy);
            answering.execute(() -> response.respond(MessageWriter.of(new UnsafeBuffer(copy), 0, copy.length)));
        }, 0);
        final TransportClient client = client(config);

        final List<CompletableFuture<DirectBuffer>> futures = new ArrayList<>();
        for (int i = 0; i < 500; i++)
        {
            futures.add(client.send(addressOf(server), text("request-" + i), LONG_TIMEOUT));
        }
        for (int i = 0; i < futures.size(); i++)
        {
            final DirectBuffer answer = futures.get(i).get(30, TimeUnit.SECONDS);
            assertThat(answer.getStringWithoutLengthUtf8(0, answer.capacity())).isEqualTo("request-" + i);
        }
    }

    @Test
    void requestToServerThatNeverAnswersFailsAtItsDeadlineAndLeavesNoPendingEntry() throws Exception
    {
        final TransportServer server = start(NEVER_ANSWERS, 0);
        final TransportClient client = client(config);
        final InetSocketAddress address = addressOf(server);

        final long start = System.nanoTime();
        final CompletableFuture<DirectBuffer> future = client.send(address, text("anyone?"), Duration.ofMillis(300));
        await().atMost(Duration.ofSeconds(5)).until(() -> client.pendingRequests(address) == 1 || future.isDone());

        assertThatThrownBy(() -> future.get(20, TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class)
            .cause().isInstanceOf(RequestTimeoutException.class).hasMessageContaining("timed out after 300 ms");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(290);
        assertThat(client.pendingRequests(address)).isZero();
        assertThat(client.isConnected(address)).as("a timeout does not close the connection").isTrue();
    }

    @Test
    void mixedDeadlinesEachFailOnTimeIncludingOnesLongerThanATurnOfTheTimerWheel() throws Exception
    {
        final TransportServer server = start(NEVER_ANSWERS, 0);
        final TransportClient client = client(config);
        final InetSocketAddress address = addressOf(server);

        final long start = System.nanoTime();
        final List<CompletableFuture<DirectBuffer>> short200 = new ArrayList<>();
        final List<CompletableFuture<DirectBuffer>> long60s = new ArrayList<>();
        for (int i = 0; i < 100; i++)
        {
            short200.add(client.send(address, text("s" + i), Duration.ofMillis(200)));
            long60s.add(client.send(address, text("l" + i), Duration.ofSeconds(60)));
        }
        final CompletableFuture<DirectBuffer> beyondOneTurn = client.send(address, text("w"), Duration.ofMillis(2_600));

        for (final CompletableFuture<DirectBuffer> future : short200)
        {
            assertThatThrownBy(() -> future.get(20, TimeUnit.SECONDS)).cause().isInstanceOf(RequestTimeoutException.class);
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(195);
        assertThat(beyondOneTurn).isNotDone();
        assertThatThrownBy(() -> beyondOneTurn.get(20, TimeUnit.SECONDS)).cause().isInstanceOf(RequestTimeoutException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(2_595);

        assertThat(long60s).noneMatch(CompletableFuture::isDone);
        assertThat(client.pendingRequests(address)).isEqualTo(100);
    }

    @Test
    void requestToDeadAddressFailsFastNotAtTheDeadline() throws Exception
    {
        final InetSocketAddress dead = InetSocketAddress.createUnresolved("127.0.0.1", freePort());
        final TransportClient client = client(config);

        final long start = System.nanoTime();
        final CompletableFuture<DirectBuffer> first = client.send(dead, text("hello?"), LONG_TIMEOUT);
        assertThatThrownBy(() -> first.get(20, TimeUnit.SECONDS))
            .cause().isInstanceOf(PeerUnreachableException.class).hasMessageContaining("127.0.0.1:" + dead.getPort());
        final CompletableFuture<DirectBuffer> second = client.send(dead, text("still there?"), LONG_TIMEOUT);
        assertThatThrownBy(() -> second.get(20, TimeUnit.SECONDS))
            .cause().isInstanceOf(PeerUnreachableException.class);

        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5_000);
        assertThat(client.pendingRequests(dead)).isZero();
        assertThat(client.isConnected(dead)).isFalse();
    }

    @Test
    void unresolvableHostFailsFast() throws Exception
    {
        final TransportClient client = client(config);
        final InetSocketAddress nowhere = InetSocketAddress.createUnresolved("no-such-host.invalid", 26501);

        assertThatThrownBy(() -> client.send(nowhere, text("x"), LONG_TIMEOUT).get(20, TimeUnit.SECONDS))
            .cause().isInstanceOf(PeerUnreachableException.class).hasMessageContaining("no-such-host.invalid:26501");
    }

    @Test
    void pendingRequestsFailFastWhenTheConnectionDrops() throws Exception
    {
        final TransportServer server = start(NEVER_ANSWERS, 0);
        final TransportClient client = client(config);
        final InetSocketAddress address = addressOf(server);
        final List<CompletableFuture<DirectBuffer>> futures = new ArrayList<>();
        for (int i = 0; i < 10; i++)
        {
            futures.add(client.send(address, text("r" + i), LONG_TIMEOUT));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> client.pendingRequests(address) == 10);

        final long start = System.nanoTime();
        server.close();

        for (final CompletableFuture<DirectBuffer> future : futures)
        {
            assertThatThrownBy(() -> future.get(20, TimeUnit.SECONDS))
                .cause().isInstanceOf(PeerUnreachableException.class).hasMessageContaining("closed");
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(10_000);
        assertThat(client.pendingRequests(address)).isZero();
        assertThat(client.isConnected(address)).isFalse();
    }

    @Test
    void reconnectsAfterTheServerRestartsOnTheSamePort() throws Exception
    {
        final TransportServer first = TransportServer.start(new InetSocketAddress("127.0.0.1", 0), Echo.HANDLER, config);
        final int port = first.localAddress().getPort();
        final InetSocketAddress address = InetSocketAddress.createUnresolved("localhost", port);
        final TransportClient client = client(config);
        assertThat(client.send(address, text("before"), LONG_TIMEOUT).get(20, TimeUnit.SECONDS).capacity()).isEqualTo(6);

        first.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> !client.isConnected(address));
        assertThatThrownBy(() -> client.send(address, text("while down"), LONG_TIMEOUT).get(20, TimeUnit.SECONDS))
            .cause().isInstanceOf(PeerUnreachableException.class);

        start(Echo.HANDLER, port);
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).ignoreExceptions().until(() ->
            client.send(address, text("after"), LONG_TIMEOUT).get(20, TimeUnit.SECONDS).capacity() == 5);
        assertThat(client.isConnected(address)).isTrue();
        assertThat(client.send(address, text("again"), LONG_TIMEOUT).get(20, TimeUnit.SECONDS)
            .getStringWithoutLengthUtf8(0, 5)).isEqualTo("again");
    }

    @Test
    void peerSendingAnOversizeFrameIsDisconnectedAndItsRequestsFailFast() throws Exception
    {
        try (ServerSocket rogue = new ServerSocket(0, 10, java.net.InetAddress.getLoopbackAddress()))
        {
            final Thread answering = new Thread(() ->
            {
                try (java.net.Socket socket = rogue.accept())
                {
                    socket.getInputStream().read(new byte[64]);
                    socket.getOutputStream().write(new byte[]{(byte)0xFF, (byte)0xFF, (byte)0xFF, (byte)0x7F, 1, 2, 3});
                    socket.getOutputStream().flush();
                    Thread.sleep(30_000);
                }
                catch (final Exception ignored)
                {
                    // the client hung up, as it should
                }
            });
            answering.setDaemon(true);
            answering.start();
            final TransportClient client = client(config);
            final InetSocketAddress address = InetSocketAddress.createUnresolved("127.0.0.1", rogue.getLocalPort());

            final long start = System.nanoTime();
            assertThatThrownBy(() -> client.send(address, text("hi"), LONG_TIMEOUT).get(20, TimeUnit.SECONDS))
                .cause().isInstanceOf(PeerUnreachableException.class);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(10_000);
            assertThat(client.pendingRequests(address)).isZero();
            await().atMost(Duration.ofSeconds(10)).until(() -> !client.isConnected(address));
        }
    }

    @Test
    void tenThousandConcurrentRequestsOverOneConnectionAllGetTheirOwnAnswer() throws Exception
    {
        final TransportServer server = start(Echo.HANDLER, 0);
        final TransportClient client = client(config);
        final InetSocketAddress address = addressOf(server);
        final int count = 10_000;
        final UnsafeBuffer request = new UnsafeBuffer(new byte[16]);

        final List<CompletableFuture<DirectBuffer>> futures = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            request.putLong(0, i, ByteOrder.LITTLE_ENDIAN);
            request.putLong(8, ~(long)i, ByteOrder.LITTLE_ENDIAN);
            futures.add(client.send(address, MessageWriter.of(request, 0, 16), Duration.ofSeconds(60)));
        }
        for (int i = 0; i < count; i++)
        {
            final DirectBuffer answer = futures.get(i).get(60, TimeUnit.SECONDS);
            assertThat(answer.getLong(0, ByteOrder.LITTLE_ENDIAN)).isEqualTo(i);
            assertThat(answer.getLong(8, ByteOrder.LITTLE_ENDIAN)).isEqualTo(~(long)i);
        }
        assertThat(server.connectionCount()).isEqualTo(1);
        assertThat(client.pendingRequests(address)).isZero();
    }

    @Test
    void requestsBeyondTheInFlightLimitFailFastSayingSo() throws Exception
    {
        final TransportServer server = start(NEVER_ANSWERS, 0);
        final TransportClient client = client(config.withMaxInFlightPerConnection(4));
        final InetSocketAddress address = addressOf(server);
        for (int i = 0; i < 4; i++)
        {
            client.send(address, text("r" + i), LONG_TIMEOUT);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> client.pendingRequests(address) == 4);

        assertThatThrownBy(() -> client.send(address, text("fifth"), LONG_TIMEOUT).get(5, TimeUnit.SECONDS))
            .cause().isExactlyInstanceOf(TransportException.class)
            .hasMessageContaining("limit 4 (maxInFlightPerConnection)");
        assertThat(client.pendingRequests(address)).isEqualTo(4);
    }

    @Test
    void requestLargerThanTheMaximumFailsWithoutBeingSent() throws Exception
    {
        final TransportServer server = start(Echo.HANDLER, 0);
        final TransportClient client = client(config.withMaxFrameLength(1024));
        final byte[] big = new byte[2048];

        assertThatThrownBy(() -> client.send(addressOf(server), MessageWriter.of(new UnsafeBuffer(big), 0, big.length),
            LONG_TIMEOUT).get(5, TimeUnit.SECONDS))
            .cause().isInstanceOf(TransportException.class).hasMessageContaining("2048 bytes");
        assertThat(client.isConnected(addressOf(server))).isFalse();
    }

    @Test
    void closedClientRefusesToSend() throws Exception
    {
        final TransportServer server = start(Echo.HANDLER, 0);
        final TransportClient client = new TransportClient(config);
        client.close();

        assertThatThrownBy(() -> client.send(addressOf(server), text("x"), LONG_TIMEOUT).get(5, TimeUnit.SECONDS))
            .cause().isInstanceOf(TransportException.class).hasMessageContaining("closed");
    }

    private TransportServer start(final RequestHandler handler, final int port)
    {
        final TransportServer server = TransportServer.start(new InetSocketAddress("127.0.0.1", port), handler, config);
        toClose.add(server);
        return server;
    }

    private TransportClient client(final TransportConfig clientConfig)
    {
        final TransportClient client = new TransportClient(clientConfig);
        toClose.add(client);
        return client;
    }

    static InetSocketAddress addressOf(final TransportServer server)
    {
        return InetSocketAddress.createUnresolved("127.0.0.1", server.localAddress().getPort());
    }

    static MessageWriter text(final String text)
    {
        final byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return MessageWriter.of(new UnsafeBuffer(bytes), 0, bytes.length);
    }

    static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }
}
