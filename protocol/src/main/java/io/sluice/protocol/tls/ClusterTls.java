package io.sluice.protocol.tls;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.ssl.SslProvider;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Mutual TLS of the cluster's own links (gateway to broker command ports, broker to broker Raft): TLS 1.3 only,
 * a peer must present a certificate signed by one of the trusted CAs, and the check happens in the handshake,
 * before any frame is read. A client also checks that the server's certificate names the address it connected to
 * (as Ratis's gRPC transport does), so a broker's certificate carries its host names or IPs as subject alternative names.
 * <p>
 * The key and trust managers handed to Netty and to Ratis re-read the three files when one of them changes (looked
 * at most once a second, when a handshake asks), so replaced certificates are used for new connections without a
 * restart; connections already open keep the session they have. Files that turn out bad on a reload are logged
 * and the previous material stays in use; at startup they stop the process ({@link InvalidClusterConfigException}
 * naming the setting). Thread-safe.
 */
public final class ClusterTls
{
    private static final Logger LOG = LoggerFactory.getLogger(ClusterTls.class);
    private static final String[] PROTOCOLS = {"TLSv1.3"};
    private static final long CHECK_INTERVAL_NANOS = Duration.ofSeconds(1).toNanos();
    private static final long REFUSAL_LOG_INTERVAL_NANOS = Duration.ofMinutes(1).toNanos();

    private final TlsFiles files;
    private final Clock clock;
    private final ReloadingKeyManager keyManager = new ReloadingKeyManager();
    private final ReloadingTrustManager trustManager = new ReloadingTrustManager();
    private final SslProvider provider;
    private final SslContext serverContext;
    private volatile Generation current;
    private volatile Generation previous;
    private volatile long nextCheckNanos;
    private volatile String lastReloadFailure;
    private final Map<String, Long> refusalsLogged = new ConcurrentHashMap<>();

    private ClusterTls(final TlsFiles files, final Clock clock)
    {
        this.files = files;
        this.clock = clock;
        this.current = new Generation(0, TlsMaterial.read(files, clock.instant()), stamp(files));
        this.previous = current;
        this.nextCheckNanos = System.nanoTime() + CHECK_INTERVAL_NANOS;
        // Always the JDK's TLS, the one the reloading key and trust managers are tested with: Netty would take OpenSSL
        // whenever netty-tcnative is on the classpath (the jar ships none; a test dependency brought it in), and with
        // it these managers refuse every peer ("PKIX path building failed"), so the choice must not follow the classpath.
        this.provider = SslProvider.JDK;
        try
        {
            this.serverContext = SslContextBuilder.forServer(keyManager)
                .trustManager(trustManager)
                .clientAuth(ClientAuth.REQUIRE)
                .protocols(PROTOCOLS)
                .sslProvider(provider)
                .build();
            clientBuilder().build(); // fails here, at startup, if this JVM cannot make a client context
        }
        catch (final SSLException e)
        {
            throw new InvalidClusterConfigException(TlsFiles.ENABLED_SETTING, "cannot set up TLS 1.3 with " + provider +
                ": " + e.getMessage());
        }
        LOG.info("cluster TLS on ({}, TLS 1.3, client certificates required): certificate {} ({}), valid until {}",
            provider, files.certificate(), subject(), notAfter());
    }

    /**
     * Reads and checks the files.
     *
     * @throws InvalidClusterConfigException naming the setting: a missing or unreadable file, a private key that
     *                                       does not belong to the certificate, a certificate expired or not yet valid.
     */
    public static ClusterTls load(final TlsFiles files)
    {
        return load(files, Clock.systemUTC());
    }

    public static ClusterTls load(final TlsFiles files, final Clock clock)
    {
        Objects.requireNonNull(files, "files");
        return new ClusterTls(files, clock);
    }

    public TlsFiles files()
    {
        return files;
    }

    private SslContextBuilder clientBuilder()
    {
        return SslContextBuilder.forClient()
            .keyManager(keyManager)
            .trustManager(trustManager)
            .protocols(PROTOCOLS)
            .sslProvider(provider);
    }

    /** For a server socket: requires and checks the client's certificate. */
    public SslContext serverContext()
    {
        return serverContext;
    }

    /**
     * The handlers that go first in a server connection's pipeline: the TLS handler, and one that checks the
     * client's certificates again against the trusted CAs as they are now once the handshake is done (a client
     * resuming an earlier session skips the certificate exchange, and its CA may no longer be trusted).
     */
    public ChannelHandler[] serverHandlers(final ByteBufAllocator allocator)
    {
        return new ChannelHandler[]{serverContext.newHandler(allocator), new CheckResumedPeer()};
    }

    /**
     * As {@link #serverHandlers}, for a client connection to {@code host}:{@code port} (whose certificate must name
     * it). Each connection gets an SSL context of its own, so it never resumes an earlier session: every new
     * connection runs a full handshake against the files as they are now. Connections are long-lived, so the few
     * milliseconds this costs are paid rarely.
     */
    public ChannelHandler[] clientHandlers(final ByteBufAllocator allocator, final String host, final int port)
    {
        final SslContext fresh;
        try
        {
            fresh = clientBuilder().build();
        }
        catch (final SSLException e)
        {
            throw new IllegalStateException("cannot set up a TLS client context: " + e.getMessage(), e);
        }
        return new ChannelHandler[]{fresh.newHandler(allocator, host, port)};
    }

    /** The reloading key manager (this process's certificate), e.g. for Ratis's gRPC transport. */
    public X509ExtendedKeyManager keyManager()
    {
        return keyManager;
    }

    /** The reloading trust manager (the trusted CAs). */
    public X509ExtendedTrustManager trustManager()
    {
        return trustManager;
    }

    /** When the certificate in use expires (after re-reading the files if they changed). */
    public Instant notAfter()
    {
        reloadIfChanged();
        return current.material.leaf().getNotAfter().toInstant();
    }

    /** The certificate in use's subject. */
    public String subject()
    {
        return current.material.leaf().getSubjectX500Principal().getName();
    }

    /** Whether the certificate in use expires within {@code window} from now. */
    public boolean expiresWithin(final Duration window)
    {
        return !notAfter().isAfter(clock.instant().plus(window));
    }

    /** Why the last reload was refused (the old material stays in use), or null. */
    public String lastReloadFailure()
    {
        return lastReloadFailure;
    }

    /** Re-reads the files now if one of them changed since the last reading; throttled to once a second. */
    void reloadIfChanged()
    {
        final long now = System.nanoTime();
        if (now - nextCheckNanos < 0)
        {
            return;
        }
        synchronized (this)
        {
            if (now - nextCheckNanos < 0)
            {
                return;
            }
            nextCheckNanos = now + CHECK_INTERVAL_NANOS;
            final Generation was = current;
            final List<Object> stamp = stamp(files);
            if (stamp.equals(was.stamp))
            {
                return;
            }
            try
            {
                final TlsMaterial material = TlsMaterial.read(files, clock.instant());
                previous = was;
                current = new Generation(was.number + 1, material, stamp);
                lastReloadFailure = null;
                LOG.info("cluster TLS: certificate files changed, new connections use {} valid until {}",
                    material.leaf().getSubjectX500Principal().getName(), material.leaf().getNotAfter().toInstant());
            }
            catch (final InvalidClusterConfigException e)
            {
                // A half-written set of files is normal during a rotation: keep the old material, try again later.
                if (!e.getMessage().equals(lastReloadFailure))
                {
                    LOG.error("cluster TLS: the changed certificate files cannot be used, keeping the previous ones: {}",
                        e.getMessage());
                }
                lastReloadFailure = e.getMessage();
            }
        }
    }

    private Generation generationOf(final String alias)
    {
        final Generation now = current;
        if (alias == null || alias.equals(now.alias))
        {
            return now;
        }
        final Generation before = previous;
        return alias.equals(before.alias) ? before : null;
    }

    /** Modification times and sizes of the three files: a change in any of them means a reload. */
    private static List<Object> stamp(final TlsFiles files)
    {
        return List.of(stampOf(files.certificate()), stampOf(files.privateKey()), stampOf(files.trustedCertificates()));
    }

    private static String stampOf(final Path file)
    {
        try
        {
            final BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
            return attributes.lastModifiedTime().toMillis() + "/" + attributes.size() + "/" + attributes.fileKey();
        }
        catch (final IOException e)
        {
            return "missing";
        }
    }

    /** Checks a client's certificate chain against the trusted CAs once more after the handshake. */
    private final class CheckResumedPeer extends ChannelInboundHandlerAdapter
    {
        @Override
        public void userEventTriggered(final ChannelHandlerContext ctx, final Object event) throws Exception
        {
            if (event instanceof SslHandshakeCompletionEvent completion && completion.isSuccess())
            {
                final SslHandler ssl = ctx.pipeline().get(SslHandler.class);
                try
                {
                    final X509Certificate[] chain = (X509Certificate[])ssl.engine().getSession().getPeerCertificates();
                    trustManager.checkClientTrusted(chain, chain[0].getPublicKey().getAlgorithm());
                }
                catch (final SSLPeerUnverifiedException | CertificateException | ClassCastException e)
                {
                    LOG.warn("closing connection from {}: its certificate is not trusted now: {}",
                        ctx.channel().remoteAddress(), e.getMessage());
                    ctx.close();
                    return;
                }
                ctx.pipeline().remove(this);
            }
            super.userEventTriggered(ctx, event);
        }
    }

    /** One reading of the files; its key alias names it, so a handshake uses one generation's chain and key. */
    private record Generation(long number, TlsMaterial material, List<Object> stamp, String alias)
    {
        Generation(final long number, final TlsMaterial material, final List<Object> stamp)
        {
            this(number, material, stamp, "sluice-" + number);
        }
    }

    private final class ReloadingKeyManager extends X509ExtendedKeyManager
    {
        private String[] aliases(final String keyType)
        {
            reloadIfChanged();
            final Generation now = current;
            return keyType == null || matches(keyType, now.material.privateKey.getAlgorithm()) ?
                new String[]{now.alias} : null;
        }

        /** Key types as JSSE asks for them: "RSA", "EC", "EC_EC", "RSASSA-PSS", "EdDSA"... */
        private static boolean matches(final String keyType, final String algorithm)
        {
            return switch (algorithm)
            {
                case "RSA" -> keyType.equals("RSA") || keyType.startsWith("RSA_") || keyType.equals("RSASSA-PSS");
                case "EC" -> keyType.startsWith("EC");
                case "Ed25519", "Ed448", "EdDSA" -> keyType.equals("EdDSA") || keyType.equals(algorithm);
                default -> keyType.equals(algorithm);
            };
        }

        private String choose(final String[] keyTypes)
        {
            reloadIfChanged();
            final Generation now = current;
            if (keyTypes == null)
            {
                return now.alias;
            }
            for (final String keyType : keyTypes)
            {
                if (aliases(keyType) != null)
                {
                    return now.alias;
                }
            }
            return null;
        }

        @Override
        public String[] getClientAliases(final String keyType, final Principal[] issuers)
        {
            return aliases(keyType);
        }

        @Override
        public String chooseClientAlias(final String[] keyTypes, final Principal[] issuers, final Socket socket)
        {
            return choose(keyTypes);
        }

        @Override
        public String chooseEngineClientAlias(final String[] keyTypes, final Principal[] issuers, final SSLEngine engine)
        {
            return choose(keyTypes);
        }

        @Override
        public String[] getServerAliases(final String keyType, final Principal[] issuers)
        {
            return aliases(keyType);
        }

        @Override
        public String chooseServerAlias(final String keyType, final Principal[] issuers, final Socket socket)
        {
            return choose(new String[]{keyType});
        }

        @Override
        public String chooseEngineServerAlias(final String keyType, final Principal[] issuers, final SSLEngine engine)
        {
            return choose(new String[]{keyType});
        }

        @Override
        public X509Certificate[] getCertificateChain(final String alias)
        {
            final Generation generation = generationOf(alias);
            return generation == null ? null : generation.material.chain.clone();
        }

        @Override
        public PrivateKey getPrivateKey(final String alias)
        {
            final Generation generation = generationOf(alias);
            return generation == null ? null : generation.material.privateKey;
        }
    }

    /** Logs a refused peer certificate: at most once a minute per subject, so a peer retrying cannot flood the log. */
    private void refused(final X509Certificate[] chain, final String peerRole, final CertificateException e)
    {
        final String subject = chain == null || chain.length == 0 ? "(no certificate)" :
            chain[0].getSubjectX500Principal().getName() + " issued by " + chain[0].getIssuerX500Principal().getName();
        final long now = System.nanoTime();
        final Long last = refusalsLogged.get(subject);
        if (last == null || now - last > REFUSAL_LOG_INTERVAL_NANOS)
        {
            if (refusalsLogged.size() > 1000)
            {
                refusalsLogged.clear();
            }
            refusalsLogged.put(subject, now);
            LOG.warn("cluster TLS: refused the {} certificate {}: not signed by a CA in {} ({})", peerRole, subject,
                files.trustedCertificates(), e.getMessage());
        }
    }

    private final class ReloadingTrustManager extends X509ExtendedTrustManager
    {
        private X509ExtendedTrustManager delegate()
        {
            reloadIfChanged();
            return current.material.trustManager;
        }

        /** One check by the current delegate; a refusal is logged (rate-limited) with the peer's role, then rethrown. */
        private void check(final X509Certificate[] chain, final String peerRole, final TrustCheck check)
            throws CertificateException
        {
            try
            {
                check.run(delegate());
            }
            catch (final CertificateException e)
            {
                refused(chain, peerRole, e);
                throw e;
            }
        }

        @Override
        public void checkClientTrusted(final X509Certificate[] chain, final String authType, final Socket socket)
            throws CertificateException
        {
            check(chain, "client", (trust) -> trust.checkClientTrusted(chain, authType, socket));
        }

        @Override
        public void checkServerTrusted(final X509Certificate[] chain, final String authType, final Socket socket)
            throws CertificateException
        {
            check(chain, "server", (trust) -> trust.checkServerTrusted(chain, authType, socket));
        }

        @Override
        public void checkClientTrusted(final X509Certificate[] chain, final String authType, final SSLEngine engine)
            throws CertificateException
        {
            check(chain, "client", (trust) -> trust.checkClientTrusted(chain, authType, engine));
        }

        @Override
        public void checkServerTrusted(final X509Certificate[] chain, final String authType, final SSLEngine engine)
            throws CertificateException
        {
            check(chain, "server", (trust) -> trust.checkServerTrusted(chain, authType, engine));
        }

        @Override
        public void checkClientTrusted(final X509Certificate[] chain, final String authType) throws CertificateException
        {
            check(chain, "client", (trust) -> trust.checkClientTrusted(chain, authType));
        }

        @Override
        public void checkServerTrusted(final X509Certificate[] chain, final String authType) throws CertificateException
        {
            check(chain, "server", (trust) -> trust.checkServerTrusted(chain, authType));
        }

        @Override
        public X509Certificate[] getAcceptedIssuers()
        {
            return delegate().getAcceptedIssuers();
        }
    }

    @FunctionalInterface
    private interface TrustCheck
    {
        void run(X509ExtendedTrustManager trust) throws CertificateException;
    }
}
