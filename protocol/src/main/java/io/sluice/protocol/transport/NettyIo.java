package io.sluice.protocol.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** Epoll when the native library loads, NIO otherwise; the choice is made once per JVM. */
final class NettyIo
{
    static final boolean EPOLL = Epoll.isAvailable();

    private NettyIo()
    {
    }

    static EventLoopGroup newGroup(final int threads, final String name)
    {
        final IoHandlerFactory factory = EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true), factory);
    }

    static Class<? extends SocketChannel> socketChannel()
    {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    static Class<? extends ServerChannel> serverSocketChannel()
    {
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    /** Shuts the group down without a quiet period and waits at most {@code timeout}. */
    static boolean shutdown(final EventLoopGroup group, final Duration timeout)
    {
        group.shutdownGracefully(0, timeout.toMillis(), TimeUnit.MILLISECONDS);
        try
        {
            return group.terminationFuture().await(timeout.toMillis() + 100, TimeUnit.MILLISECONDS);
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
