package io.sluice.protocol.transport;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TransportClientTest
{
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final TransportConfig config = TransportConfig.defaults();
    private TransportServer server;
    private TransportClient client;

    @AfterEach
    void closeAll()
    {
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
    void echoesBytesThroughServerAndBack() throws Exception
    {
        server = TransportServer.start(new InetSocketAddress("127.0.0.1", 0), Echo.HANDLER, config);
        client = new TransportClient(config);

        final byte[] bytes = "hello sluice".getBytes(StandardCharsets.UTF_8);
        final DirectBuffer answer = client
            .send(unresolved(server), MessageWriter.of(new UnsafeBuffer(bytes), 0, bytes.length), TIMEOUT)
            .get(20, TimeUnit.SECONDS);

        assertThat(answer.capacity()).isEqualTo(bytes.length);
        assertThat(answer.getStringWithoutLengthUtf8(0, bytes.length)).isEqualTo("hello sluice");
        assertThat(client.isConnected(unresolved(server))).isTrue();
        assertThat(client.pendingRequests(unresolved(server))).isZero();
    }

    static InetSocketAddress unresolved(final TransportServer server)
    {
        return InetSocketAddress.createUnresolved("127.0.0.1", server.localAddress().getPort());
    }
}
