package io.sluice.protocol.transport;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.ReferenceCountUtil;
import io.sluice.protocol.tls.ClusterTls;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;

import static io.sluice.protocol.transport.TransportServer.describe;

/**
 * Sends requests and matches responses by correlation id, over one lazily opened connection per remote
 * address with many requests in flight on it.
 * <p>
 * Failure model: every request has a deadline ({@link RequestTimeoutException}, its pending entry removed);
 * a peer that refuses or drops the connection fails its requests at once ({@link PeerUnreachableException});
 * after a failure, sends to that peer fail fast for a backoff (doubling up to a maximum), then the next send
 * connects again.
 * <p>
 * Thread-safe: {@code send} may be called from any thread. Futures complete on a transport I/O thread, so
 * callbacks must not block (use the {@code *Async} variants for blocking work). A connection's pending
 * requests are touched only on its I/O thread, which is why they need no locks.
 */
public final class TransportClient implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(TransportClient.class);

    /**
     * Deadlines are checked by one sweep of a connection's pending requests every tick while any are in
     * flight, so a request fails at most a tick late: scheduling one event-loop task per request cost more
     * than half the throughput.
     */
    private static final long TIMEOUT_TICK_NS = TimeUnit.MILLISECONDS.toNanos(5);

    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<Connection> PENDING_COUNT =
        (AtomicIntegerFieldUpdater)AtomicIntegerFieldUpdater.newUpdater(Connection.class, "pendingCount");

    private final TransportConfig config;
    private final ClusterTls tls;
    private final EventLoopGroup group;
    private final Bootstrap bootstrap;
    /** Copy-on-write, scanned on every send: a cluster has few peers, and unresolved addresses hash slowly. */
    private volatile Peer[] peers = new Peer[0];
    private final AtomicLong correlationIds = new AtomicLong();
    private volatile boolean closed;

    public TransportClient(final TransportConfig config)
    {
        this(config, null);
    }

    /** A client that speaks mutual TLS to every peer when {@code tls} is not null. */
    public TransportClient(final TransportConfig config, final ClusterTls tls)
    {
        this.config = config;
        this.tls = tls;
        this.group = NettyIo.newGroup(config.ioThreads(), "sluice-transport-client");
        this.bootstrap = new Bootstrap()
            .group(group)
            .channel(NettyIo.socketChannel())
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.SO_KEEPALIVE, true)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int)Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis()));
    }

    /**
     * Sends one request and returns its answer: the response message bytes (SBE header first, offset 0),
     * owned by the caller. The request is encoded before this method returns, so the writer may be reused
     * right away.
     *
     * @param remote  the peer's address; may be unresolved, it is resolved when connecting.
     * @param timeout deadline of this request, counted from now.
     */
    public CompletableFuture<DirectBuffer> send(
        final InetSocketAddress remote, final MessageWriter request, final Duration timeout)
    {
        if (closed)
        {
            return CompletableFuture.failedFuture(new TransportException("transport client is closed"));
        }
        final int length = request.encodedLength();
        if (length < 0 || length > config.maxMessageLength())
        {
            return CompletableFuture.failedFuture(new TransportException("request of " + length +
                " bytes to " + describe(remote) + " exceeds the maximum message length " + config.maxMessageLength()));
        }
        final long timeoutNs = Math.max(1, timeout.toNanos());
        final Connection connection;
        try
        {
            connection = peerOf(remote).connection();
        }
        catch (final TransportException e)
        {
            return CompletableFuture.failedFuture(e);
        }

        final long correlationId = correlationIds.incrementAndGet();
        final ByteBuf frame;
        try
        {
            frame = Frames.encode(ByteBufAllocator.DEFAULT, correlationId, request, length);
        }
        catch (final RuntimeException e)
        {
            return CompletableFuture.failedFuture(
                new TransportException("cannot encode request to " + describe(remote) + ": " + e, e));
        }
        final PendingRequest pending = new PendingRequest(connection, correlationId, frame, System.nanoTime(), timeoutNs);
        final EventLoop loop = connection.channel.eventLoop();
        if (loop.inEventLoop())
        {
            pending.run();
        }
        else
        {
            try
            {
                loop.execute(pending);
            }
            catch (final RuntimeException e)
            {
                pending.releaseFrame();
                return CompletableFuture.failedFuture(
                    new PeerUnreachableException("transport client is closing: " + describe(remote), e));
            }
        }
        return pending;
    }

    /** True when a connection to the remote is open now. */
    public boolean isConnected(final InetSocketAddress remote)
    {
        final Peer peer = findPeer(remote);
        final Connection connection = peer == null ? null : peer.current;
        return connection != null && connection.channel.isActive();
    }

    /** Requests sent to the remote and not yet answered, failed or timed out. */
    public int pendingRequests(final InetSocketAddress remote)
    {
        final Peer peer = findPeer(remote);
        final Connection connection = peer == null ? null : peer.current;
        return connection == null ? 0 : connection.pendingCount;
    }

    /** Closes every connection (failing their pending requests) and stops the I/O threads, waiting a bounded time. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        final List<ChannelFuture> closing = new ArrayList<>();
        for (final Peer peer : peers)
        {
            final Connection connection = peer.current;
            if (connection != null)
            {
                closing.add(connection.channel.close());
            }
        }
        for (final ChannelFuture future : closing)
        {
            future.awaitUninterruptibly(config.shutdownTimeout().toMillis());
        }
        if (!NettyIo.shutdown(group, config.shutdownTimeout()))
        {
            LOG.warn("transport client closed, but its event loops did not stop within {}", config.shutdownTimeout());
        }
    }

    /**
     * When the certificate {@code remote} presented in the last TLS handshake with it expires: empty without TLS
     * or before a connection to it succeeded.
     */
    public Optional<Instant> peerCertificateNotAfter(final InetSocketAddress remote)
    {
        final Peer peer = findPeer(remote);
        return peer == null ? Optional.empty() : Optional.ofNullable(peer.certificateNotAfter);
    }

    private Peer findPeer(final InetSocketAddress remote)
    {
        final Peer[] snapshot = peers;
        for (final Peer peer : snapshot)
        {
            if (peer.remote == remote)
            {
                return peer;
            }
        }
        final String host = remote.getHostString();
        final int port = remote.getPort();
        for (final Peer peer : snapshot)
        {
            if (peer.port == port && peer.host.equals(host))
            {
                return peer;
            }
        }
        return null;
    }

    private Peer peerOf(final InetSocketAddress remote)
    {
        final Peer peer = findPeer(remote);
        return peer != null ? peer : addPeer(remote);
    }

    private synchronized Peer addPeer(final InetSocketAddress remote)
    {
        final Peer existing = findPeer(remote);
        if (existing != null)
        {
            return existing;
        }
        final Peer peer = new Peer(remote);
        final Peer[] grown = java.util.Arrays.copyOf(peers, peers.length + 1);
        grown[grown.length - 1] = peer;
        peers = grown;
        return peer;
    }

    /** Connection state towards one remote address: the current connection and the reconnect backoff. */
    private final class Peer
    {
        private final InetSocketAddress remote;
        private final String host;
        private final int port;
        private volatile Connection current;
        /** When the certificate the peer presented in its last TLS handshake expires; null without TLS. */
        private volatile Instant certificateNotAfter;
        private long retryAtNs;
        private long backoffNs;

        Peer(final InetSocketAddress remote)
        {
            this.remote = remote;
            this.host = remote.getHostString();
            this.port = remote.getPort();
            this.backoffNs = config.reconnectBackoff().toNanos();
        }

        Connection connection()
        {
            final Connection connection = current;
            if (connection != null && !connection.dead)
            {
                return connection;
            }
            synchronized (this)
            {
                final Connection again = current;
                if (again != null && !again.dead)
                {
                    return again;
                }
                if (closed)
                {
                    throw new TransportException("transport client is closed");
                }
                final long now = System.nanoTime();
                if (again != null && now - retryAtNs < 0)
                {
                    throw new PeerUnreachableException(describe(remote) + " unreachable (" + again.failure +
                        "); next connection attempt in " + TimeUnit.NANOSECONDS.toMillis(retryAtNs - now) + " ms", null);
                }
                final Connection fresh = new Connection(this);
                current = fresh;
                return fresh;
            }
        }

        /** Called on the connection's I/O thread when it failed to open or closed. */
        synchronized void onDead(final Connection connection, final boolean wasOpen)
        {
            if (wasOpen)
            {
                backoffNs = config.reconnectBackoff().toNanos();
            }
            retryAtNs = System.nanoTime() + backoffNs;
            if (!wasOpen)
            {
                backoffNs = Math.min(backoffNs * 2, config.maxReconnectBackoff().toNanos());
            }
        }
    }

    /** One TCP connection and its requests in flight; all mutable state below is owned by the channel's I/O thread. */
    private final class Connection extends FrameDecoder
    {
        private final Peer peer;
        private final List<PendingRequest> expired = new ArrayList<>();
        private boolean sweepScheduled;
        private final Channel channel;
        private final ChannelFuture connectFuture;
        private final Long2ObjectHashMap<PendingRequest> pending = new Long2ObjectHashMap<>();
        private final List<PendingRequest> awaitingConnect = new ArrayList<>();
        /** Written only on the I/O thread with release semantics (no fence per request), read by any thread. */
        private volatile int pendingCount;
        private volatile boolean dead;
        private volatile String failure = "not connected";
        private boolean open;

        Connection(final Peer peer)
        {
            super(config.maxFrameLength());
            this.peer = peer;
            final Connection self = this;
            this.connectFuture = bootstrap.clone()
                .handler(new ChannelInitializer<SocketChannel>()
                {
                    protected void initChannel(final SocketChannel ch)
                    {
                        if (tls != null)
                        {
                            // Requests written before the handshake completes wait in the handler, encrypted after it.
                            ch.pipeline().addLast(tls.clientHandlers(ch.alloc(), peer.remote.getHostString(),
                                peer.remote.getPort()));
                        }
                        ch.pipeline().addLast(new FlushConsolidationHandler(256, true), self);
                    }
                })
                .connect(peer.remote);
            this.channel = connectFuture.channel();
            connectFuture.addListener((ChannelFuture f) -> onConnectDone(f));
            channel.closeFuture().addListener(f -> onClosed());
        }

        private void onConnectDone(final ChannelFuture future)
        {
            if (future.isSuccess())
            {
                open = true;
                LOG.debug("connected to {}", describe(peer.remote));
                for (final PendingRequest request : awaitingConnect)
                {
                    request.writeIfPending();
                }
                channel.flush();
                awaitingConnect.clear();
            }
            else
            {
                final Throwable cause = future.cause();
                failure = cause == null ? "connect failed" : cause.getMessage();
                LOG.debug("cannot connect to {}: {}", describe(peer.remote), failure);
                die(false, "cannot connect to " + describe(peer.remote) + ": " + failure, cause);
            }
        }

        private void onClosed()
        {
            if (!dead)
            {
                if (open)
                {
                    failure = "connection closed";
                    LOG.info("connection to {} closed with {} requests in flight", describe(peer.remote), pending.size());
                }
                die(open, "connection to " + describe(peer.remote) + " closed", null);
            }
        }

        /** On the I/O thread: fails everything in flight and starts the backoff. */
        private void die(final boolean wasOpen, final String reason, final Throwable cause)
        {
            if (dead)
            {
                return;
            }
            peer.onDead(this, wasOpen); // before dead is seen, so a sender that sees it also sees the backoff
            dead = true;
            final List<PendingRequest> failed = new ArrayList<>(pending.values());
            pending.clear();
            PENDING_COUNT.lazySet(this, 0);
            awaitingConnect.clear();
            for (final PendingRequest request : failed)
            {
                request.fail(new PeerUnreachableException(reason + " (request " + request.correlationId + ")", cause));
            }
            channel.close();
        }

        /** On the I/O thread: admits a request, or fails it at once. */
        void register(final PendingRequest request)
        {
            if (dead || (connectFuture.isDone() && !channel.isActive()))
            {
                request.fail(new PeerUnreachableException(
                    describe(peer.remote) + " unreachable (" + failure + ")", null));
                return;
            }
            if (pending.size() >= config.maxInFlightPerConnection())
            {
                request.fail(new TransportException("too many requests in flight to " + describe(peer.remote) +
                    ": limit " + config.maxInFlightPerConnection() + " (maxInFlightPerConnection) reached"));
                return;
            }
            pending.put(request.correlationId, request);
            PENDING_COUNT.lazySet(this, pending.size());
            if (!sweepScheduled)
            {
                sweepScheduled = true;
                channel.eventLoop().schedule(this::sweepTimeouts, TIMEOUT_TICK_NS, TimeUnit.NANOSECONDS);
            }
            if (open)
            {
                request.write(true);
            }
            else
            {
                awaitingConnect.add(request);
            }
        }

        /** On the I/O thread, every tick while requests are in flight: fails those whose deadline passed. */
        private void sweepTimeouts()
        {
            sweepScheduled = false;
            if (dead)
            {
                return;
            }
            final long now = System.nanoTime();
            for (final PendingRequest request : pending.values())
            {
                if (request.deadlineNs - now <= 0)
                {
                    expired.add(request);
                }
            }
            for (int i = 0, size = expired.size(); i < size; i++)
            {
                final PendingRequest request = expired.get(i);
                pending.remove(request.correlationId);
                PENDING_COUNT.lazySet(this, pending.size());
                request.fail(request.timeoutException());
            }
            expired.clear();
            if (!pending.isEmpty())
            {
                sweepScheduled = true;
                channel.eventLoop().schedule(this::sweepTimeouts, TIMEOUT_TICK_NS, TimeUnit.NANOSECONDS);
            }
        }


        @Override
        protected void onMessage(
            final ChannelHandlerContext ctx,
            final long correlationId,
            final ByteBuf frames,
            final int index,
            final UnsafeBuffer message,
            final int length)
        {
            final PendingRequest request = pending.remove(correlationId);
            if (request == null)
            {
                LOG.debug("dropping response {} from {}: no request waits for it (timed out?)",
                    correlationId, describe(peer.remote));
                return;
            }
            PENDING_COUNT.lazySet(this, pending.size());
            final byte[] copy = new byte[length];
            frames.getBytes(index, copy);
            request.answer(new UnsafeBuffer(copy));
        }

        @Override
        public void userEventTriggered(final ChannelHandlerContext ctx, final Object event) throws Exception
        {
            if (event instanceof SslHandshakeCompletionEvent completion && completion.isSuccess())
            {
                final SslHandler ssl = ctx.pipeline().get(SslHandler.class);
                final Certificate[] chain = ssl == null ? null : ssl.engine().getSession().getPeerCertificates();
                if (chain != null && chain.length > 0 && chain[0] instanceof X509Certificate leaf)
                {
                    peer.certificateNotAfter = leaf.getNotAfter().toInstant();
                }
            }
            super.userEventTriggered(ctx, event);
        }

        @Override
        public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause)
        {
            final SSLException tlsFailure = TransportServer.tlsFailure(cause);
            if (tlsFailure != null)
            {
                LOG.warn("closing connection to {}: TLS handshake failed: {}", describe(peer.remote), tlsFailure.getMessage());
                failure = "TLS handshake failed: " + tlsFailure.getMessage();
            }
            else if (cause instanceof DecoderException)
            {
                LOG.warn("closing connection to {}: {}", describe(peer.remote),
                    cause.getCause() != null ? cause.getCause().getMessage() : cause.getMessage());
                failure = "protocol error: " + cause.getMessage();
            }
            else if (cause instanceof IOException)
            {
                LOG.debug("connection to {} failed: {}", describe(peer.remote), cause.toString());
                failure = cause.getMessage();
            }
            else
            {
                LOG.warn("closing connection to {} after an error", describe(peer.remote), cause);
                failure = cause.toString();
            }
            ctx.close();
        }
    }

    /**
     * One request in flight, and the future handed to the caller (one object instead of two on the hot path);
     * runs its own admission on the connection's I/O thread.
     */
    private static final class PendingRequest extends CompletableFuture<DirectBuffer> implements Runnable
    {
        private final Connection connection;
        private final long correlationId;
        private final long startNs;
        private final long deadlineNs;
        private ByteBuf frame;

        PendingRequest(
            final Connection connection, final long correlationId, final ByteBuf frame, final long startNs, final long timeoutNs)
        {
            this.connection = connection;
            this.correlationId = correlationId;
            this.frame = frame;
            this.startNs = startNs;
            this.deadlineNs = startNs + timeoutNs;
        }

        public void run()
        {
            connection.register(this);
        }

        void write(final boolean flush)
        {
            final ByteBuf toWrite = frame;
            frame = null;
            if (flush)
            {
                connection.channel.writeAndFlush(toWrite, connection.channel.voidPromise());
            }
            else
            {
                connection.channel.write(toWrite, connection.channel.voidPromise());
            }
        }

        void writeIfPending()
        {
            if (frame != null && !isDone())
            {
                write(false);
            }
        }

        void releaseFrame()
        {
            final ByteBuf toRelease = frame;
            frame = null;
            if (toRelease != null)
            {
                ReferenceCountUtil.safeRelease(toRelease);
            }
        }

        void answer(final DirectBuffer response)
        {
            complete(response);
        }

        void fail(final TransportException e)
        {
            releaseFrame();
            completeExceptionally(e);
        }

        RequestTimeoutException timeoutException()
        {
            return new RequestTimeoutException("request " + correlationId + " to " + describe(connection.peer.remote) +
                " timed out after " + TimeUnit.NANOSECONDS.toMillis(deadlineNs - startNs) + " ms");
        }
    }
}
