package io.sluice.protocol.tls;

import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Finds, at startup, a broker whose {@code sluice.cluster.tls.enabled} differs from this process's: at runtime such
 * a peer only shows in the logs (its connections fail), so a cluster half on TLS would start and never work.
 * <p>
 * Each peer's command port gets a TLS 1.3 ClientHello (made by the JDK, no certificate involved), and the first
 * bytes of its answer tell the modes apart: a TLS server answers with a TLS record (its ServerHello, or an alert),
 * a plain broker closes the connection without a byte (its frame decoder refuses a TLS handshake). Peers are probed
 * in parallel within one bounded time; a peer that is down or does not answer in time proves nothing and is no
 * error, since a broker must start while others are down.
 */
public final class TlsModeProbe
{
    /** How long a startup waits for its peers at most. */
    public static final Duration DEFAULT_BUDGET = Duration.ofSeconds(2);

    /**
     * The server name (SNI) of the probe's ClientHello: a plain broker recognises a probe by it and closes the
     * connection without logging a misconfigured peer; TLS servers ignore it (none of them checks SNI).
     */
    public static final String PROBE_SERVER_NAME = "sluice-tls-mode-probe";

    private static final Logger LOG = LoggerFactory.getLogger(TlsModeProbe.class);

    private TlsModeProbe()
    {
    }

    /** What a peer's answer to a ClientHello says about it. */
    public enum Mode
    {
        /** It answered with a TLS record. */
        TLS,
        /** It took the connection and closed it, or answered, without TLS. */
        PLAIN,
        /** Down, refused the connection, or silent within the time given. */
        UNKNOWN
    }

    /**
     * Probes {@code peers} (each named by its description, e.g. "broker 1 at host:port") and stops at the first one
     * that speaks the other mode.
     *
     * @param tlsEnabled whether this process has cluster TLS on
     * @param who        this process, for the message ("broker 0", "the gateway")
     * @throws InvalidClusterConfigException naming {@link TlsFiles#ENABLED_SETTING} and the peer
     */
    public static void check(
        final boolean tlsEnabled, final String who, final List<Peer> peers, final Duration budget)
    {
        if (peers.isEmpty())
        {
            return;
        }
        final long deadline = System.nanoTime() + budget.toNanos();
        final ExecutorService executor = Executors.newFixedThreadPool(peers.size(), runnable ->
        {
            final Thread thread = new Thread(runnable, "sluice-tls-probe");
            thread.setDaemon(true);
            return thread;
        });
        try
        {
            final List<Future<Mode>> modes = new ArrayList<>();
            for (final Peer peer : peers)
            {
                modes.add(executor.submit(() -> probe(peer.address(), deadline)));
            }
            for (int i = 0; i < peers.size(); i++)
            {
                final Peer peer = peers.get(i);
                final Mode mode = await(modes.get(i), deadline);
                LOG.debug("TLS mode probe: {} answers {}", peer.description(), mode);
                if (tlsEnabled && mode == Mode.PLAIN)
                {
                    throw new InvalidClusterConfigException(TlsFiles.ENABLED_SETTING, "true on " + who + ", but " +
                        peer.description() + " answers without TLS: set it the same on every broker and gateway");
                }
                if (!tlsEnabled && mode == Mode.TLS)
                {
                    throw new InvalidClusterConfigException(TlsFiles.ENABLED_SETTING, "false on " + who + ", but " +
                        peer.description() + " answers with TLS: set it the same on every broker and gateway");
                }
            }
        }
        finally
        {
            executor.shutdownNow();
        }
    }

    /** A peer to probe, and how to name it in the message. */
    public record Peer(InetSocketAddress address, String description)
    {
    }

    private static Mode await(final Future<Mode> mode, final long deadline)
    {
        try
        {
            return mode.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        catch (final TimeoutException | ExecutionException e)
        {
            return Mode.UNKNOWN;
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            return Mode.UNKNOWN;
        }
    }

    /** Sends a ClientHello to {@code address} and classifies its answer; never waits past {@code deadline}. */
    public static Mode probe(final InetSocketAddress peer, final long deadline)
    {
        // Resolved here, on the probe's thread: a slow name lookup counts against the deadline like a slow peer.
        final InetSocketAddress address = peer.isUnresolved() ?
            new InetSocketAddress(peer.getHostString(), peer.getPort()) : peer;
        if (address.isUnresolved())
        {
            return Mode.UNKNOWN;
        }
        try (Socket socket = new Socket())
        {
            socket.connect(address, remainingMillis(deadline));
            socket.setSoTimeout(remainingMillis(deadline));
            socket.getOutputStream().write(clientHello(address));
            socket.getOutputStream().flush();
            final byte[] head = new byte[3];
            final int read = readUpTo(socket.getInputStream(), head);
            if (read == 0)
            {
                return Mode.PLAIN; // taken and closed without a byte: a plain broker refusing a TLS handshake
            }
            return isTlsRecord(head, read) ? Mode.TLS : Mode.PLAIN;
        }
        catch (final SocketTimeoutException e)
        {
            return Mode.UNKNOWN;
        }
        catch (final IOException e)
        {
            // Refused, unreachable, or reset: nothing shows which mode a peer speaks.
            return Mode.UNKNOWN;
        }
    }

    private static int remainingMillis(final long deadline)
    {
        final long millis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (millis <= 0)
        {
            return 1; // 0 would mean "wait forever"
        }
        return (int)Math.min(Integer.MAX_VALUE, millis);
    }

    /** Reads until {@code into} is full or the stream ends; returns how many bytes came. */
    private static int readUpTo(final InputStream in, final byte[] into) throws IOException
    {
        int read = 0;
        while (read < into.length)
        {
            final int n = in.read(into, read, into.length - read);
            if (n < 0)
            {
                break;
            }
            read += n;
        }
        return read;
    }

    /** A TLS record header: handshake (22) or alert (21), protocol version 3.x. */
    private static boolean isTlsRecord(final byte[] head, final int length)
    {
        return length >= 2 && (head[0] == 0x16 || head[0] == 0x15) && head[1] == 0x03;
    }

    /** The first flight of a JDK TLS 1.3 client: one handshake record holding a ClientHello. */
    private static byte[] clientHello(final InetSocketAddress address) throws SSLException
    {
        final SSLEngine engine;
        try
        {
            final SSLContext context = SSLContext.getInstance("TLSv1.3");
            context.init(null, null, null);
            engine = context.createSSLEngine(address.getHostString(), address.getPort());
        }
        catch (final GeneralSecurityException e)
        {
            throw new SSLException("cannot make a TLS 1.3 ClientHello: " + e.getMessage(), e);
        }
        engine.setUseClientMode(true);
        final SSLParameters parameters = engine.getSSLParameters();
        parameters.setProtocols(new String[]{"TLSv1.3"});
        parameters.setServerNames(List.of(new SNIHostName(PROBE_SERVER_NAME)));
        engine.setSSLParameters(parameters);
        final ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
        engine.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        return Arrays.copyOf(out.array(), out.limit());
    }
}
