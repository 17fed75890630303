package io.sluice.protocol.transport;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
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
import io.sluice.protocol.tls.ClusterTls;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Accepts connections and dispatches each request frame to one {@link RequestHandler} on the
 * connection's I/O thread; answers go back on the same connection with the request's correlation id.
 * <p>
 * A connection that sends a malformed frame (negative, too short or oversize length) is closed; other
 * connections are not affected. A handler that throws before answering gets an INTERNAL_ERROR answer
 * sent for it. A port open to a network bounds what strangers can hold ({@link ConnectionLimits}): connections
 * beyond the maximum are closed at once, a connection that owes a frame for longer than the frame timeout (one
 * that never sent a whole frame, or stopped in the middle of one) is closed, and so is one whose partial frame
 * would take the bytes buffered across connections beyond their bound. Thread-safe.
 */
public final class TransportServer implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(TransportServer.class);

    private final TransportConfig config;
    private final ConnectionLimits limits;
    private final ClusterTls tls;
    private final RequestHandler handler;
    private final EventLoopGroup bossGroup;
    private final EventLoopGroup workerGroup;
    private final ChannelGroup channels = new DefaultChannelGroup("sluice-transport", GlobalEventExecutor.INSTANCE);
    private final Channel serverChannel;
    private final InetSocketAddress localAddress;
    private final AtomicLong bufferedBytes = new AtomicLong();
    private final AtomicLong refusedConnections = new AtomicLong();
    private volatile boolean closed;

    private TransportServer(
        final InetSocketAddress bind,
        final RequestHandler handler,
        final TransportConfig config,
        final ConnectionLimits limits,
        final ClusterTls tls)
    {
        this.config = config;
        this.limits = limits;
        this.tls = tls;
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
                    if (channels.size() >= limits.maxConnections())
                    {
                        refuse(ch);
                        return;
                    }
                    channels.add(ch);
                    if (tls != null)
                    {
                        // First in the pipeline: nothing reaches the frame decoder before the handshake succeeded.
                        ch.pipeline().addLast(tls.serverHandlers(ch.alloc()));
                    }
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
        LOG.info("transport server listening on {} ({}{})", describe(localAddress), NettyIo.EPOLL ? "epoll" : "nio",
            tls == null ? "" : ", mutual TLS");
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
        return start(bind, handler, config, ConnectionLimits.defaults());
    }

    /** As {@link #start(InetSocketAddress, RequestHandler, TransportConfig)}, with these connection limits. */
    public static TransportServer start(
        final InetSocketAddress bind,
        final RequestHandler handler,
        final TransportConfig config,
        final ConnectionLimits limits)
    {
        return start(bind, handler, config, limits, null);
    }

    /**
     * As {@link #start(InetSocketAddress, RequestHandler, TransportConfig, ConnectionLimits)}, and with mutual TLS
     * when {@code tls} is not null: a client without a certificate signed by a trusted CA is refused in the
     * handshake, before any of its frames is read.
     */
    public static TransportServer start(
        final InetSocketAddress bind,
        final RequestHandler handler,
        final TransportConfig config,
        final ConnectionLimits limits,
        final ClusterTls tls)
    {
        if (bind == null || handler == null || config == null || limits == null)
        {
            throw new IllegalArgumentException("bind address, handler, config and limits are required");
        }
        return new TransportServer(bind, handler, config, limits, tls);
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

    /** Bytes of partial frames held across connections now. */
    public long bufferedBytes()
    {
        return bufferedBytes.get();
    }

    private void refuse(final Channel channel)
    {
        // One line for the first refusal and then for every 100th: a flood must not flood the log as well.
        final long refused = refusedConnections.incrementAndGet();
        if (refused == 1 || refused % 100 == 0)
        {
            LOG.warn("refusing the connection from {}: {} connections are open, the maximum ({} refused so far)",
                channel.remoteAddress(), limits.maxConnections(), refused);
        }
        channel.close();
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

    /** The TLS failure in a cause chain, or null. */
    static SSLException tlsFailure(final Throwable cause)
    {
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause())
        {
            if (t instanceof SSLException ssl)
            {
                return ssl;
            }
        }
        return null;
    }

    static String describe(final InetSocketAddress address)
    {
        return address.getHostString() + ":" + address.getPort();
    }

    /**
     * One accepted connection: decodes frames, dispatches them, and closes on protocol violations and on the
     * {@link ConnectionLimits}. Its fields are used on the connection's event loop only.
     */
    private final class ServerConnection extends FrameDecoder
    {
        private final Channel channel;
        private long completedFrames;
        private long buffered;
        /** Since when the connection owes a frame (opened, or a frame started), in nanos; 0 when it owes none. */
        private long owingSinceNanos = System.nanoTime();
        private ScheduledFuture<?> frameTimer;

        ServerConnection(final Channel channel)
        {
            super(config.maxFrameLength());
            this.channel = channel;
        }

        @Override
        public void channelActive(final ChannelHandlerContext ctx) throws Exception
        {
            final long periodMs = Math.max(10, limits.frameTimeout().toMillis() / 4);
            frameTimer = ctx.executor().scheduleAtFixedRate(() -> checkFrameTimeout(ctx), periodMs, periodMs,
                TimeUnit.MILLISECONDS);
            super.channelActive(ctx);
        }

        @Override
        public void channelRead(final ChannelHandlerContext ctx, final Object msg) throws Exception
        {
            final long framesBefore = completedFrames;
            super.channelRead(ctx, msg);
            final int pending = internalBuffer().readableBytes();
            if (completedFrames != framesBefore)
            {
                owingSinceNanos = pending > 0 ? System.nanoTime() : 0;
            }
            else if (pending > 0 && owingSinceNanos == 0)
            {
                owingSinceNanos = System.nanoTime();
            }
            account(ctx, pending);
        }

        @Override
        public void channelInactive(final ChannelHandlerContext ctx) throws Exception
        {
            release();
            super.channelInactive(ctx);
        }

        @Override
        protected void handlerRemoved0(final ChannelHandlerContext ctx) throws Exception
        {
            release();
            super.handlerRemoved0(ctx);
        }

        private void account(final ChannelHandlerContext ctx, final int pending)
        {
            final long delta = pending - buffered;
            buffered = pending;
            final long total = bufferedBytes.addAndGet(delta);
            if (delta > 0 && total > limits.maxBufferedBytes())
            {
                LOG.warn("closing connection from {}: its partial frame of {} bytes would take the bytes buffered " +
                    "across connections to {}, beyond the maximum of {}", channel.remoteAddress(), pending, total,
                    limits.maxBufferedBytes());
                release();
                ctx.close();
            }
        }

        private void checkFrameTimeout(final ChannelHandlerContext ctx)
        {
            final long since = owingSinceNanos;
            if (since != 0 && System.nanoTime() - since > limits.frameTimeout().toNanos() && channel.isActive())
            {
                LOG.warn("closing connection from {}: no complete frame within {} ms ({} bytes of a frame received)",
                    channel.remoteAddress(), limits.frameTimeout().toMillis(), buffered);
                release();
                ctx.close();
            }
        }

        private void release()
        {
            if (frameTimer != null)
            {
                frameTimer.cancel(false);
                frameTimer = null;
            }
            bufferedBytes.addAndGet(-buffered);
            buffered = 0;
            owingSinceNanos = 0;
        }

        protected void onMessage(
            final ChannelHandlerContext ctx,
            final long correlationId,
            final ByteBuf frames,
            final int index,
            final UnsafeBuffer message,
            final int length)
        {
            completedFrames++;
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
            final SSLException tlsFailure = tlsFailure(cause);
            if (tlsFailure != null)
            {
                LOG.warn("closing connection from {}: TLS handshake refused: {}", channel.remoteAddress(),
                    tlsFailure.getMessage());
            }
            else if (cause instanceof DecoderException)
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
