package io.sluice.cli;

import picocli.CommandLine;
import tools.jackson.databind.json.JsonMapper;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Collection;

/**
 * A blocking client of the gateway's management API ({@code /actuator/...}). Every call waits at most
 * the timeout; a refused connection or a missing answer becomes {@link GatewayUnreachableException},
 * any HTTP status becomes a {@link GatewayAnswer}. Not thread-safe-sensitive: one per CLI run.
 */
public final class ManagementClient
{
    private final URI base;
    private final String token;
    private final Duration timeout;
    private final HttpClient http;

    public ManagementClient(final String gatewayUrl, final String token, final Duration timeout)
    {
        this(gatewayUrl, token, timeout, null);
    }

    /**
     * @param caCertificates PEM bundle of the CAs an https gateway's certificate must chain to, or null for the
     *                       JVM's default trust store.
     * @throws IllegalArgumentException naming the file when it cannot be read or holds no certificate.
     */
    public ManagementClient(final String gatewayUrl, final String token, final Duration timeout, final Path caCertificates)
    {
        this.base = parseBase(gatewayUrl);
        this.token = token;
        this.timeout = timeout;
        // HTTP/1.1 only: no h2c upgrade dance on plain http, one round trip per call.
        final HttpClient.Builder builder = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(timeout)
            .followRedirects(HttpClient.Redirect.NEVER);
        if (caCertificates != null)
        {
            builder.sslContext(trusting(caCertificates));
        }
        this.http = builder.build();
    }

    /** TLS that trusts exactly the certificates in {@code pem} (the gateway's host name is still checked). */
    private static SSLContext trusting(final Path pem)
    {
        try (InputStream in = Files.newInputStream(pem))
        {
            final Collection<? extends Certificate> certificates = CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (certificates.isEmpty())
            {
                throw new IllegalArgumentException("--ca-cert: " + pem + " holds no PEM certificate");
            }
            final KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
            trust.load(null, null);
            int i = 0;
            for (final Certificate certificate : certificates)
            {
                trust.setCertificateEntry("ca-" + i++, certificate);
            }
            final TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init(trust);
            final SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, factory.getTrustManagers(), null);
            return context;
        }
        catch (final IOException | GeneralSecurityException ex)
        {
            throw new IllegalArgumentException("--ca-cert: cannot use " + pem + ": " + describe(ex), ex);
        }
    }

    /** The shared mapper, built on first use: a call that never gets an answer never pays for Jackson. */
    public static JsonMapper mapper()
    {
        return MapperHolder.MAPPER;
    }

    private static final class MapperHolder
    {
        static final JsonMapper MAPPER = JsonMapper.builder().build();
    }

    public URI base()
    {
        return base;
    }

    public GatewayAnswer get(final String path) throws GatewayUnreachableException
    {
        return send("GET", path, HttpRequest.BodyPublishers.noBody(), false);
    }

    public GatewayAnswer delete(final String path) throws GatewayUnreachableException
    {
        return send("DELETE", path, HttpRequest.BodyPublishers.noBody(), false);
    }

    /** A POST with no body and no Content-Type, as a plain {@code curl -X POST} sends it. */
    public GatewayAnswer post(final String path) throws GatewayUnreachableException
    {
        return send("POST", path, HttpRequest.BodyPublishers.noBody(), false);
    }

    public GatewayAnswer postJson(final String path, final String json) throws GatewayUnreachableException
    {
        return send("POST", path, HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8), true);
    }

    private GatewayAnswer send(
        final String method, final String path, final HttpRequest.BodyPublisher body, final boolean json)
        throws GatewayUnreachableException
    {
        final URI uri = URI.create(base + "/actuator" + path);
        final HttpRequest.Builder request = HttpRequest.newBuilder(uri)
            .timeout(timeout)
            .header("Accept", "application/json")
            .method(method, body);
        if (json)
        {
            request.header("Content-Type", "application/json");
        }
        if (token != null)
        {
            request.header("Authorization", "Bearer " + token);
        }

        try
        {
            final HttpResponse<String> response =
                http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return GatewayAnswer.parse(mapper(), method, path, response.statusCode(), response.body());
        }
        catch (final HttpTimeoutException ex)
        {
            throw new GatewayUnreachableException(
                method + " " + uri + ": no answer within " + Durations.format(timeout), ex);
        }
        catch (final ConnectException ex)
        {
            throw new GatewayUnreachableException(
                method + " " + uri + ": cannot connect ("
                + (ex.getMessage() != null ? ex.getMessage() : "connection refused") + ")", ex);
        }
        catch (final IOException ex)
        {
            throw new GatewayUnreachableException(method + " " + uri + ": " + describe(ex), ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new GatewayUnreachableException(method + " " + uri + ": interrupted", ex);
        }
    }

    private static String describe(final Throwable ex)
    {
        Throwable cause = ex;
        while (cause.getMessage() == null && cause.getCause() != null)
        {
            cause = cause.getCause();
        }
        return cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName();
    }

    private static URI parseBase(final String gatewayUrl)
    {
        String text = gatewayUrl.strip();
        while (text.endsWith("/"))
        {
            text = text.substring(0, text.length() - 1);
        }
        if (text.endsWith("/actuator"))
        {
            text = text.substring(0, text.length() - "/actuator".length());
        }
        try
        {
            final URI uri = new URI(text);
            if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null)
            {
                throw new URISyntaxException(gatewayUrl, "need http://HOST:PORT");
            }
            return uri;
        }
        catch (final URISyntaxException ex)
        {
            throw new CommandLine.TypeConversionException(
                "--gateway '" + gatewayUrl + "' is not a URL like http://127.0.0.1:9600");
        }
    }
}
