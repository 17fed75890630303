package io.sluice.qa.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.ReferenceCountUtil;
import io.sluice.protocol.codecs.AdminRequestDecoder;
import io.sluice.protocol.codecs.AdminRequestEncoder;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.AdminResponseDecoder;
import io.sluice.protocol.codecs.AdminResponseEncoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.message.ErrorResponseWriter;
import io.sluice.protocol.message.SbeMessages;
import io.sluice.protocol.transport.FrameDescriptor;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.RequestHandler;
import io.sluice.protocol.transport.ResponseChannel;
import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.transport.ConnectionLimits;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import io.sluice.protocol.transport.TransportServer;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Request round trips per second over ONE connection: the SBE/Netty transport (AdminRequest answered by an
 * AdminResponse, correlated by id, with deadlines) against a raw Netty echo of the same frame size, the same
 * window of requests in flight and the same flush consolidation, in the same JVM. Ratio = project / raw.
 */
public final class TransportBenchmark
{
    private static final int MAX_FRAME_LENGTH = TransportConfig.DEFAULT_MAX_FRAME_LENGTH;
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private TransportBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start("transport", args);
        final int window = run.choose("window", 128, 128);
        final int warmupSeconds = run.choose("warmup_s", 5, 15);
        final int measureSeconds = run.choose("measure_s", 5, 10);
        final int rounds = run.choose("rounds", 1, 3);
        run.param("transport", Epoll.isAvailable() ? "epoll" : "nio");
        run.param("request_frame_bytes", FrameDescriptor.HEADER_LENGTH + AdminRequests.LENGTH);
        run.param("connections", 1);

        final Round project = new ProjectRound(window, run.clusterTls());
        final Round raw = new RawRound(window);
        try
        {
            run.log("warming up the project transport for %d s", warmupSeconds);
            project.measure(Duration.ofSeconds(warmupSeconds));
            run.log("warming up the raw Netty echo for %d s", warmupSeconds);
            raw.measure(Duration.ofSeconds(warmupSeconds));

            final double[] projectRates = new double[rounds];
            final double[] projectCpu = new double[rounds];
            final double[] rawRates = new double[rounds];
            final double[] rawCpu = new double[rounds];
            for (int r = 0; r < rounds; r++)
            {
                final Sample projectSample = project.measure(Duration.ofSeconds(measureSeconds));
                projectRates[r] = projectSample.roundTripsPerSecond();
                projectCpu[r] = projectSample.cpuMicrosPerRoundTrip();
                run.log("round %d: project %,10.0f round trips/s, %.2f us CPU each", r + 1, projectRates[r], projectCpu[r]);
                final Sample rawSample = raw.measure(Duration.ofSeconds(measureSeconds));
                rawRates[r] = rawSample.roundTripsPerSecond();
                rawCpu[r] = rawSample.cpuMicrosPerRoundTrip();
                run.log("round %d: raw     %,10.0f round trips/s, %.2f us CPU each", r + 1, rawRates[r], rawCpu[r]);
            }
            final double projectRate = Stats.median(projectRates);
            final double rawRate = Stats.median(rawRates);
            run.result("project_round_trips_per_s", projectRate)
                .result("raw_round_trips_per_s", rawRate)
                .result("project_cpu_us_per_round_trip", Stats.median(projectCpu))
                .result("raw_cpu_us_per_round_trip", Stats.median(rawCpu))
                .result("load_average", java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage())
                .ratio(projectRate / rawRate);
        }
        finally
        {
            project.close();
            raw.close();
        }
        run.finish();
    }

    /** Round trips per second, and CPU time of the whole JVM per round trip (less sensitive to a busy machine). */
    private record Sample(double roundTripsPerSecond, double cpuMicrosPerRoundTrip)
    {
        static Sample of(final long count, final long elapsedNs, final long cpuNs)
        {
            return new Sample(Stats.perSecond(count, elapsedNs), cpuNs / 1000.0 / Math.max(1, count));
        }
    }

    /** One side of the comparison: keeps {@code window} requests in flight for a while and counts answers. */
    private interface Round extends AutoCloseable
    {
        Sample measure(Duration duration) throws Exception;

        void close();
    }

    /** AdminRequest encoding: one reusable writer per thread, since the transport encodes on the calling thread. */
    private static final class AdminRequests implements MessageWriter
    {
        static final int LENGTH = MessageHeaderEncoder.ENCODED_LENGTH + AdminRequestEncoder.BLOCK_LENGTH;
        static final ThreadLocal<AdminRequests> PER_THREAD = ThreadLocal.withInitial(AdminRequests::new);

        private final MessageHeaderEncoder header = new MessageHeaderEncoder();
        private final AdminRequestEncoder encoder = new AdminRequestEncoder();
        private long version;

        public int encodedLength()
        {
            return LENGTH;
        }

        public void write(final MutableDirectBuffer buffer, final int offset)
        {
            encoder.wrapAndApplyHeader(buffer, offset, header)
                .brokerId(1).partitionId(7).kind(AdminRequestKind.PAUSE_EXPORTING).version(++version)
                .leaderTargeted(BooleanType.TRUE);
        }
    }

    /** The broker-like side: checks the header, decodes the request, answers an AdminResponse. */
    private static final class AdminHandler implements RequestHandler, MessageWriter
    {
        private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
        private final AdminRequestDecoder requestDecoder = new AdminRequestDecoder();
        private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
        private final AdminResponseEncoder responseEncoder = new AdminResponseEncoder();
        private int brokerId;
        private int partitionId;
        private long version;

        public void onRequest(final DirectBuffer buffer, final int offset, final int length, final ResponseChannel response)
        {
            if (!SbeMessages.isMessage(buffer, offset, length, AdminRequestDecoder.TEMPLATE_ID, AdminRequestDecoder.BLOCK_LENGTH))
            {
                response.respond(ErrorResponseWriter.of(ErrorCode.MALFORMED_REQUEST, 0, ErrorResponseWriter.NO_LEADER,
                    SbeMessages.describe(buffer, offset, length)));
                return;
            }
            requestDecoder.wrapAndApplyHeader(buffer, offset, headerDecoder);
            brokerId = requestDecoder.brokerId();
            partitionId = requestDecoder.partitionId();
            version = requestDecoder.version();
            response.respond(this); // encoded synchronously, on this I/O thread: reusing this writer is safe
        }

        public int encodedLength()
        {
            return MessageHeaderEncoder.ENCODED_LENGTH + AdminResponseEncoder.BLOCK_LENGTH;
        }

        public void write(final MutableDirectBuffer buffer, final int offset)
        {
            responseEncoder.wrapAndApplyHeader(buffer, offset, headerEncoder)
                .brokerId(brokerId).partitionId(partitionId).exportingState(ExportingState.PAUSED)
                .version(version).exportedPosition(100).lastPosition(200);
        }
    }

    private static final class ProjectRound implements Round
    {
        private final int window;
        private final TransportServer server;
        private final TransportClient client;
        private final InetSocketAddress address;
        private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
        private final AdminResponseDecoder responseDecoder = new AdminResponseDecoder();
        private final AtomicLong completed = new AtomicLong();
        private final AtomicLong failed = new AtomicLong();
        private final java.util.function.BiConsumer<DirectBuffer, Throwable> onAnswer = this::onAnswer;
        private volatile boolean running;
        private volatile CountDownLatch drained;

        ProjectRound(final int window, final ClusterTls tls)
        {
            this.window = window;
            final TransportConfig config = TransportConfig.defaults();
            this.server = TransportServer.start(new InetSocketAddress("127.0.0.1", 0), new AdminHandler(), config,
                ConnectionLimits.defaults(), tls);
            this.client = new TransportClient(config, tls);
            this.address = InetSocketAddress.createUnresolved("127.0.0.1", server.localAddress().getPort());
        }

        public Sample measure(final Duration duration) throws Exception
        {
            completed.set(0);
            failed.set(0);
            drained = new CountDownLatch(window);
            running = true;
            final long start = System.nanoTime();
            final long cpuStart = Stats.processCpuNs();
            for (int i = 0; i < window; i++)
            {
                sendNext();
            }
            Thread.sleep(duration.toMillis());
            final long count = completed.get();
            final long elapsed = System.nanoTime() - start;
            final long cpu = Stats.processCpuNs() - cpuStart;
            running = false;
            if (!drained.await(30, TimeUnit.SECONDS))
            {
                throw new IllegalStateException("project transport: requests in flight did not drain");
            }
            if (failed.get() > 0)
            {
                throw new IllegalStateException("project transport: " + failed.get() + " requests failed");
            }
            return Sample.of(count, elapsed, cpu);
        }

        private void sendNext()
        {
            final CompletableFuture<DirectBuffer> future = client.send(address, AdminRequests.PER_THREAD.get(), REQUEST_TIMEOUT);
            future.whenComplete(onAnswer);
        }

        private void onAnswer(final DirectBuffer answer, final Throwable error)
        {
            if (error != null || responseDecoder.wrapAndApplyHeader(answer, 0, headerDecoder).partitionId() != 7)
            {
                failed.incrementAndGet();
            }
            completed.incrementAndGet();
            if (running && error == null)
            {
                sendNext();
            }
            else
            {
                drained.countDown();
            }
        }

        public void close()
        {
            client.close();
            server.close();
        }
    }

    /** The baseline: a length-prefixed echo in plain Netty, one connection, the same window. */
    private static final class RawRound implements Round
    {
        private final int window;
        private final EventLoopGroup serverGroup = group(1);
        private final EventLoopGroup bossGroup = group(1);
        private final EventLoopGroup clientGroup = group(1);
        private final Channel serverChannel;
        private final Channel clientChannel;
        private final AtomicLong completed = new AtomicLong();
        private volatile boolean running;
        private volatile CountDownLatch drained;
        private long correlationId;

        RawRound(final int window) throws InterruptedException
        {
            this.window = window;
            serverChannel = new ServerBootstrap()
                .group(bossGroup, serverGroup)
                .channel(Epoll.isAvailable() ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>()
                {
                    protected void initChannel(final SocketChannel ch)
                    {
                        ch.pipeline().addLast(new FlushConsolidationHandler(256, true), frameDecoder(),
                            new ChannelInboundHandlerAdapter()
                            {
                                public void channelRead(final ChannelHandlerContext ctx, final Object msg)
                                {
                                    ctx.writeAndFlush(msg, ctx.voidPromise());
                                }
                            });
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            clientChannel = new Bootstrap()
                .group(clientGroup)
                .channel(Epoll.isAvailable() ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<SocketChannel>()
                {
                    protected void initChannel(final SocketChannel ch)
                    {
                        ch.pipeline().addLast(new FlushConsolidationHandler(256, true), frameDecoder(),
                            new ChannelInboundHandlerAdapter()
                            {
                                public void channelRead(final ChannelHandlerContext ctx, final Object msg)
                                {
                                    ReferenceCountUtil.release(msg);
                                    completed.incrementAndGet();
                                    if (running)
                                    {
                                        sendNext(ctx.channel());
                                    }
                                    else
                                    {
                                        drained.countDown();
                                    }
                                }
                            });
                    }
                })
                .connect(serverChannel.localAddress()).sync().channel();
        }

        public Sample measure(final Duration duration) throws Exception
        {
            completed.set(0);
            drained = new CountDownLatch(window);
            running = true;
            final long start = System.nanoTime();
            final long cpuStart = Stats.processCpuNs();
            clientChannel.eventLoop().execute(() ->
            {
                for (int i = 0; i < window; i++)
                {
                    sendNext(clientChannel);
                }
            });
            Thread.sleep(duration.toMillis());
            final long count = completed.get();
            final long elapsed = System.nanoTime() - start;
            final long cpu = Stats.processCpuNs() - cpuStart;
            running = false;
            if (!drained.await(30, TimeUnit.SECONDS))
            {
                throw new IllegalStateException("raw echo: requests in flight did not drain");
            }
            return Sample.of(count, elapsed, cpu);
        }

        /** A frame of the same size as the project's request: length, correlation id, 25 bytes of message. */
        private void sendNext(final Channel channel)
        {
            final int frameSize = FrameDescriptor.HEADER_LENGTH + AdminRequests.LENGTH;
            final ByteBuf frame = channel.alloc().directBuffer(frameSize, frameSize);
            frame.writeIntLE(FrameDescriptor.frameLength(AdminRequests.LENGTH));
            frame.writeLongLE(++correlationId);
            frame.writeZero(AdminRequests.LENGTH);
            channel.writeAndFlush(frame, channel.voidPromise());
        }

        private static LengthFieldBasedFrameDecoder frameDecoder()
        {
            return new LengthFieldBasedFrameDecoder(ByteOrder.LITTLE_ENDIAN, MAX_FRAME_LENGTH + 4, 0, 4, 0, 0, true);
        }

        private static EventLoopGroup group(final int threads)
        {
            final IoHandlerFactory factory = Epoll.isAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
            return new MultiThreadIoEventLoopGroup(threads, factory);
        }

        public void close()
        {
            clientChannel.close().awaitUninterruptibly(5_000);
            serverChannel.close().awaitUninterruptibly(5_000);
            for (final EventLoopGroup group : new EventLoopGroup[]{clientGroup, serverGroup, bossGroup})
            {
                group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5_000);
            }
        }
    }
}
