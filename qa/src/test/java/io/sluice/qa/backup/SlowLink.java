package io.sluice.qa.backup;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A slow network link to a server, as a TCP proxy on loopback: every byte sent towards the server shares one rate
 * (bytes/s, across all connections), answers come back at full speed. It makes a store's uploads take long enough to
 * fault them mid-way without touching the product. A server that stops behind it refuses the link's new connections,
 * which the client sees as its connection closed.
 */
final class SlowLink implements AutoCloseable
{
    private static final int CHUNK = 8 * 1024;

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final AtomicBoolean open = new AtomicBoolean(true);
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final AtomicLong sent = new AtomicLong();
    private volatile long bytesPerSecond;
    private long nextFreeNanos;

    /** @param bytesPerSecond the rate towards the server; 0 is unlimited */
    SlowLink(final InetSocketAddress target, final long bytesPerSecond) throws IOException
    {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.target = target;
        this.bytesPerSecond = bytesPerSecond;
        final Thread acceptor = new Thread(this::accept, "slow-link-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port()
    {
        return server.getLocalPort();
    }

    void rate(final long bytesPerSecond)
    {
        this.bytesPerSecond = bytesPerSecond;
    }

    /** Bytes sent towards the server so far. */
    long sent()
    {
        return sent.get();
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
            catch (final IOException e)
            {
                continue; // closed: the loop ends
            }
            sockets.add(inbound);
            try
            {
                final Socket outbound = new Socket();
                sockets.add(outbound);
                outbound.connect(target, 2_000);
                pump(inbound, outbound, true);
                pump(outbound, inbound, false);
            }
            catch (final IOException e)
            {
                closeQuietly(inbound); // the server is down: the client's connection closes
            }
        }
    }

    private void pump(final Socket from, final Socket to, final boolean throttled)
    {
        final Thread thread = new Thread(() ->
        {
            final byte[] buffer = new byte[CHUNK];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream())
            {
                int read;
                while ((read = in.read(buffer)) >= 0)
                {
                    if (throttled)
                    {
                        awaitTurn(read);
                        sent.addAndGet(read);
                    }
                    out.write(buffer, 0, read);
                    out.flush();
                }
            }
            catch (final IOException | InterruptedException e)
            {
                // closed
            }
            finally
            {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }, "slow-link-pump");
        thread.setDaemon(true);
        thread.start();
    }

    /** Waits until {@code bytes} more fit the rate: one schedule for every connection, so they share it. */
    private void awaitTurn(final int bytes) throws InterruptedException
    {
        final long rate = bytesPerSecond;
        if (rate <= 0)
        {
            return;
        }
        final long due;
        synchronized (this)
        {
            final long start = Math.max(System.nanoTime(), nextFreeNanos);
            nextFreeNanos = start + TimeUnit.SECONDS.toNanos(bytes) / rate;
            due = start;
        }
        final long waitNanos = due - System.nanoTime();
        if (waitNanos > 0)
        {
            TimeUnit.NANOSECONDS.sleep(waitNanos);
        }
    }

    @Override
    public void close()
    {
        if (open.compareAndSet(true, false))
        {
            closeQuietly(server);
            sockets.forEach(SlowLink::closeQuietly);
        }
    }

    private static void closeQuietly(final java.io.Closeable closeable)
    {
        try
        {
            closeable.close();
        }
        catch (final IOException e)
        {
            // closing
        }
    }
}
