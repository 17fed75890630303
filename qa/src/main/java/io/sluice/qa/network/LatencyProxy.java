package io.sluice.qa.network;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Random;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A small userspace TCP proxy that delays every chunk it forwards by {@code delay} plus up to {@code jitter}, in both
 * directions, keeping each direction's order (the kernel here has no netem). It listens on an address of the caller's
 * choosing (the lab's root address) and forwards to one target; {@link NetworkLab#redirect} steers a host's new
 * connections to the target through it. Closing it closes every connection it carries.
 */
public final class LatencyProxy implements AutoCloseable
{
    private final ServerSocket server;
    private final InetSocketAddress target;
    private final long delayMillis;
    private final long jitterMillis;
    private final Random random;
    private final AtomicBoolean open = new AtomicBoolean(true);
    private final java.util.Set<Socket> sockets = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.AtomicLong connections = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong bytes = new java.util.concurrent.atomic.AtomicLong();

    public LatencyProxy(final InetAddress listenOn, final InetSocketAddress target, final long delayMillis,
        final long jitterMillis, final long seed) throws IOException
    {
        this.server = new ServerSocket(0, 50, listenOn);
        this.target = target;
        this.delayMillis = delayMillis;
        this.jitterMillis = jitterMillis;
        this.random = new Random(seed);
        final Thread acceptor = new Thread(this::accept, "latency-proxy-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public InetSocketAddress target()
    {
        return target;
    }

    public InetSocketAddress address()
    {
        return new InetSocketAddress(server.getInetAddress(), server.getLocalPort());
    }

    private void accept()
    {
        while (open.get())
        {
            final Socket inbound;
            try
            {
                inbound = server.accept();
            }
            catch (final IOException ex)
            {
                continue; // closed: the loop ends
            }
            try
            {
                final Socket outbound = new Socket();
                sockets.add(outbound);
                outbound.connect(target, 2_000);
                inbound.setTcpNoDelay(true);
                outbound.setTcpNoDelay(true);
                sockets.add(inbound);
                connections.incrementAndGet();
                pump(inbound, outbound);
                pump(outbound, inbound);
            }
            catch (final IOException ex)
            {
                closeQuietly(inbound); // the target refused: the client sees its connection fail and retries
            }
        }
    }

    /** One direction: a reader queues each chunk with its due time, a writer sends it when due. */
    private void pump(final Socket from, final Socket to)
    {
        final DelayQueue<Chunk> queue = new DelayQueue<>();
        final Thread reader = new Thread(() ->
        {
            final byte[] buffer = new byte[16_384];
            try (InputStream in = from.getInputStream())
            {
                long lastDue = 0;
                int read;
                while ((read = in.read(buffer)) >= 0)
                {
                    final long jitter = jitterMillis > 0 ? nextJitter() : 0;
                    // strictly after the previous chunk (the queue keeps no order among equal times): one direction stays in order
                    lastDue = Math.max(lastDue + 1, System.nanoTime() + (delayMillis + jitter) * 1_000_000);
                    queue.add(new Chunk(java.util.Arrays.copyOf(buffer, read), lastDue));
                    bytes.addAndGet(read);
                }
            }
            catch (final IOException ignore)
            {
                // closed
            }
            queue.add(new Chunk(null, System.nanoTime() + delayMillis * 1_000_000));
        }, "latency-proxy-read");
        final Thread writer = new Thread(() ->
        {
            try (OutputStream out = to.getOutputStream())
            {
                while (true)
                {
                    final Chunk chunk = queue.take();
                    if (chunk.bytes == null)
                    {
                        break;
                    }
                    out.write(chunk.bytes);
                    out.flush();
                }
            }
            catch (final IOException | InterruptedException ignore)
            {
                // closed
            }
            finally
            {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "latency-proxy-write");
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    private synchronized long nextJitter()
    {
        return (long)(random.nextDouble() * jitterMillis);
    }

    /** Connections it accepted and forwarded so far. */
    public long connections()
    {
        return connections.get();
    }

    /** What it carried so far, for the run's log: a delay nothing went through proves nothing. */
    public String carried()
    {
        return connections.get() + " connections, " + bytes.get() + " bytes";
    }

    @Override
    public void close()
    {
        if (open.compareAndSet(true, false))
        {
            closeQuietly(server);
            sockets.forEach(LatencyProxy::closeQuietly);
        }
    }

    private static void closeQuietly(final java.io.Closeable closeable)
    {
        try
        {
            closeable.close();
        }
        catch (final IOException ignore)
        {
            // closing
        }
    }

    private record Chunk(byte[] bytes, long dueNanos) implements Delayed
    {
        @Override
        public long getDelay(final TimeUnit unit)
        {
            return unit.convert(dueNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(final Delayed other)
        {
            return Long.compare(dueNanos, ((Chunk)other).dueNanos);
        }
    }
}
