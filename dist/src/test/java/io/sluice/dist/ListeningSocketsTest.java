package io.sluice.dist;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

import static org.assertj.core.api.Assertions.assertThat;

class ListeningSocketsTest
{
    @Test
    void findsASocketThisProcessListensOnWithItsAddress() throws Exception
    {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.3")))
        {
            assertThat(ListeningSockets.onPort(ProcessHandle.current().pid(), server.getLocalPort()))
                .containsExactly(new InetSocketAddress(InetAddress.getByName("127.0.0.3"), server.getLocalPort()));
        }
    }

    @Test
    void readsTheKernelsHexAddresses()
    {
        assertThat(ListeningSockets.address("0100007F:1F90")).isEqualTo(new InetSocketAddress("127.0.0.1", 8080));
        assertThat(ListeningSockets.address("00000000000000000000000001000000:2580"))
            .isEqualTo(new InetSocketAddress("::1", 9600));
        assertThat(ListeningSockets.address("00000000:2580").getAddress().isAnyLocalAddress()).isTrue();
    }
}
