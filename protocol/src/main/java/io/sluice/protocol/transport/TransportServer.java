package io.sluice.protocol.transport;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.message.ErrorResponseWriter;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * Accepts connections and dispatches each request frame to one {@link RequestHandler} on the
 * connection's I/O thread; answers go back on the same connection with the request's correlation id.
 * <p>
 * A connection that sends a malformed frame (negative, too short or oversize length) is closed; other
 * connections are not affected. A handler that throws before answering gets an INTERNAL_ERROR answer
 * sent for it. Thread-safe.
 */
public final class TransportServer implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(TransportServer.class);

    private final TransportConfig config;
    private final RequestHandler handler;
    private final EventLoopGroup bossGroup;
    private final EventLoopGroup workerGroup;
    private final ChannelGroup channels = new DefaultChannelGroup("sluice-transport", GlobalEventExecutor.INSTANCE);
    private final Channel serverChannel;
    private final InetSocketAddress localAddress;
    private volatile boolean closed;

    private TransportServer(final InetSocketAddress bind, final RequestHandler handler, final TransportConfig config)
    {
        this.config = config;
        this.handler = handler;
        this.bossGroup = NettyIo.newGroup(1, "sluice-transport-accept");
        this.workerGroup = NettyIo.newGroup(config.ioThreads(), "sluice-transport-server");
        final ServerBootstrap bootstrap = new ServerBootstrap()
            .group(bossGroup, workerGroup)
            .channel(NettyIo.serverSocketChannel())
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.SO_KEEPALIVE, true)
            .childHandler(new ChannelInitializer<SocketChannel>()
            {
                protected void initChannel(final SocketChannel ch)
                {
                    channels.add(ch);
                    ch.pipeline().addLast(
                        new FlushConsolidationHandler(256, true),
                        new ServerConnection(ch));
                }
            });

        final InetSocketAddress resolved = bind.isUnresolved() ? new InetSocketAddress(bind.getHostString(), bind.getPort()) : bind;
        if (resolved.isUnresolved())
        {
            NettyIo.shutdown(workerGroup, config.shutdownTimeout());
            NettyIo.shutdown(bossGroup, config.shutdownTimeout());
            throw new TransportException("cannot bind transport server to " + describe(bind) + ": unknown host");
        }
        final ChannelFuture bindFuture = bootstrap.bind(resolved).awaitUninterruptibly();
        if (!bindFuture.isSuccess())
        {
            NettyIo.shutdown(workerGroup, config.shutdownTimeout());
            NettyIo.shutdown(bossGroup, config.shutdownTimeout());
            final Throwable cause = bindFuture.cause();
            throw new TransportException("cannot bind transport server to " + describe(bind) + ": " +
                (cause == null ? "unknown reason" : cause.getMessage()), cause);
        }
        this.serverChannel = bindFuture.channel();
        this.localAddress = (InetSocketAddress)serverChannel.localAddress();
        LOG.info("transport server listening on {} ({})", describe(localAddress), NettyIo.EPOLL ? "epoll" : "nio");
    }

    /**
     * Binds and starts serving.
     *
     * @param bind the address to listen on; an unresolved one (as {@code PartitionDistribution} gives) is
     *             resolved here, port 0 picks a free port.
     * @throws TransportException naming the address if it cannot be bound (for example a port in use).
     */
    public static TransportServer start(
        final InetSocketAddress bind, final RequestHandler handler, final TransportConfig config)
    {
        if (bind == null || handler == null || config == null)
        {
            throw new IllegalArgumentException("bind address, handler and config are required");
        }
        return new TransportServer(bind, handler, config);
    }

    /** The bound address (with the real port when started on port 0). */
    public InetSocketAddress localAddress()
    {
        return localAddress;
    }

    /** Open client connections. */
    public int connectionCount()
    {
        return channels.size();
    }

    /** Stops accepting, closes every connection, and stops the event loops, waiting a bounded time. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        serverChannel.close().awaitUninterruptibly(config.shutdownTimeout().toMillis());
        channels.close().awaitUninterruptibly(config.shutdownTimeout().toMillis());
        final boolean workersStopped = NettyIo.shutdown(workerGroup, config.shutdownTimeout());
        final boolean bossStopped = NettyIo.shutdown(bossGroup, config.shutdownTimeout());
        if (workersStopped && bossStopped)
        {
            LOG.info("transport server on {} closed", describe(localAddress));
        }
        else
        {
            LOG.warn("transport server on {} closed, but its event loops did not stop within {}",
                describe(localAddress), config.shutdownTimeout());
        }
    }

    static String describe(final InetSocketAddress address)
    {
        return address.getHostString() + ":" + address.getPort();
    }

    /** One accepted connection: decodes frames, dispatches them, and closes on protocol violations. */
    private final class ServerConnection extends FrameDecoder
    {
        private final Channel channel;

        ServerConnection(final Channel channel)
        {
            super(config.maxFrameLength());
            this.channel = channel;
        }

        protected void onMessage(
            final ChannelHandlerContext ctx,
            final long correlationId,
            final ByteBuf frames,
            final int index,
            final UnsafeBuffer message,
            final int length)
        {
            final Response response = new Response(channel, correlationId, config.maxMessageLength());
            try
            {
                handler.onRequest(message, 0, length, response);
            }
            catch (final Throwable t)
            {
                LOG.warn("request handler failed on request {} from {}: {}",
                    correlationId, channel.remoteAddress(), t.toString(), t);
                response.respond(ErrorResponseWriter.of(ErrorCode.INTERNAL_ERROR, 0, ErrorResponseWriter.NO_LEADER,
                    "request handler failed: " + t));
            }
        }

        @Override
        public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause)
        {
            if (cause instanceof DecoderException)
            {
                LOG.warn("closing connection from {}: {}", channel.remoteAddress(),
                    cause.getCause() != null ? cause.getCause().getMessage() : cause.getMessage());
            }
            else if (cause instanceof IOException)
            {
                LOG.debug("connection from {} failed: {}", channel.remoteAddress(), cause.toString());
            }
            else
            {
                LOG.warn("closing connection from {} after an error", channel.remoteAddress(), cause);
            }
            ctx.close();
        }
    }

    /** The answer slot of one request; the first response wins, later ones are ignored. */
    private static final class Response implements ResponseChannel
    {
        private static final AtomicIntegerFieldUpdater<Response> RESPONDED =
            AtomicIntegerFieldUpdater.newUpdater(Response.class, "responded");

        private final Channel channel;
        private final long correlationId;
        private final int maxMessageLength;
        private volatile int responded;

        Response(final Channel channel, final long correlationId, final int maxMessageLength)
        {
            this.channel = channel;
            this.correlationId = correlationId;
            this.maxMessageLength = maxMessageLength;
        }

        public void respond(final MessageWriter response)
        {
            if (!RESPONDED.compareAndSet(this, 0, 1))
            {
                return;
            }
            if (!channel.isActive())
            {
                LOG.debug("dropping response to request {}: connection from {} is closed",
                    correlationId, channel.remoteAddress());
                return;
            }
            final int length = response.encodedLength();
            if (length < 0 || length > maxMessageLength)
            {
                LOG.error("dropping response to request {} from {}: {} bytes exceeds the maximum message length {}",
                    correlationId, channel.remoteAddress(), length, maxMessageLength);
                return;
            }
            final ByteBuf frame;
            try
            {
                frame = Frames.encode(channel.alloc(), correlationId, response, length);
            }
            catch (final RuntimeException | Error e)
            {
                responded = 0; // this answer could not be encoded: let another (an error answer) through
                throw e;
            }
            channel.writeAndFlush(frame, channel.voidPromise());
        }
    }
}
