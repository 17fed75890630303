package io.sluice.gateway.management;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.util.concurrent.TimeUnit;

/**
 * Sends the management server one read-only asynchronous request ({@code GET /actuator/exporters}) from loopback as
 * soon as it listens, so the first pause an operator sends does not run Spring MVC's and Tomcat's asynchronous request
 * path for the first time (issue 30: the first pause after a start loaded ~150 classes in the gateway alone). Over
 * plain HTTP only: with {@code management.server.ssl.bundle} the server may ask for a client certificate this gateway
 * does not hold, and the first call then stays cold. A failure only costs the first call its warmth.
 */
@ManagementComponent
public class ManagementServerWarmUp
{
    private static final Logger LOG = LoggerFactory.getLogger(ManagementServerWarmUp.class);
    private static final int TIMEOUT_MS = 10_000;

    private final Environment environment;

    public ManagementServerWarmUp(final Environment environment)
    {
        this.environment = environment;
    }

    @EventListener
    public void onListening(final WebServerInitializedEvent event)
    {
        if (!"management".equals(event.getApplicationContext().getServerNamespace()) ||
            environment.getProperty("management.server.ssl.bundle") != null ||
            environment.getProperty("management.server.ssl.enabled", Boolean.class, false))
        {
            return;
        }
        final URI uri = URI.create("http://127.0.0.1:" + event.getWebServer().getPort() +
            environment.getProperty("management.endpoints.web.base-path", "/actuator") + "/exporters");
        final Thread thread = new Thread(() -> warm(uri), "sluice-management-warm-up");
        thread.setDaemon(true);
        thread.start();
    }

    private static void warm(final URI uri)
    {
        final long startNs = System.nanoTime();
        HttpURLConnection connection = null;
        try
        {
            connection = (HttpURLConnection)uri.toURL().openConnection();
            connection.setConnectTimeout(TIMEOUT_MS);
            connection.setReadTimeout(TIMEOUT_MS);
            final int status = connection.getResponseCode();
            try (InputStream body = status < 400 ? connection.getInputStream() : connection.getErrorStream())
            {
                if (body != null)
                {
                    body.readAllBytes();
                }
            }
            LOG.info("management server warmed by GET {} (read-only) in {} ms: {}", uri.getPath(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs), status);
        }
        catch (final IOException | RuntimeException e)
        {
            LOG.info("management server not warmed by GET {}: {}", uri.getPath(), e.toString());
        }
        finally
        {
            if (connection != null)
            {
                connection.disconnect();
            }
        }
    }
}
