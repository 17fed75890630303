package io.sluice.exporter.opensearch.testing;

import org.opensearch.common.settings.Settings;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.transport.Netty4Plugin;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real single-node OpenSearch 2.x server inside the calling JVM, on 127.0.0.1, keeping its data under a
 * directory so it can be stopped and started again on the same data. For tests and benchmarks only.
 */
public final class OpenSearchNode implements AutoCloseable
{
    private final Path home;
    private final int httpPort;
    private final int transportPort;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private Node node;

    private OpenSearchNode(final Path home, final int httpPort, final int transportPort)
    {
        this.home = home;
        this.httpPort = httpPort;
        this.transportPort = transportPort;
    }

    /** Starts a node keeping its data under {@code home}, on free loopback ports; returns once it answers. */
    public static OpenSearchNode start(final Path home) throws Exception
    {
        final OpenSearchNode node = new OpenSearchNode(home, freePort(), freePort());
        node.start();
        return node;
    }

    /** Starts the node again on the same data and ports (after {@link #stop}). */
    public synchronized void start() throws Exception
    {
        if (node != null)
        {
            return;
        }
        Files.createDirectories(home);
        // Netty fixes its processor count once per JVM: when another test of the same JVM used Netty first (Sluice's
        // own transport does), the node's attempt to set it again throws. Leave Netty's count as it is.
        System.setProperty("opensearch.set.netty.runtime.available.processors", "false");
        final Settings settings = Settings.builder()
            .put("path.home", home.toString())
            .put("cluster.name", "sluice-test")
            .put("node.name", "n1")
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", httpPort)
            .put("transport.port", transportPort)
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("action.auto_create_index", true)
            // Where fs snapshot repositories may live (backups snapshot the index into one the test registers).
            .put("path.repo", snapshotDirectory().toString())
            .build();
        final Node started = new EmbeddedNode(settings);
        started.start();
        node = started;
        awaitGreen();
    }

    /** Stops the node (its HTTP port refuses connections until {@link #start}), keeping its data. */
    public synchronized void stop() throws Exception
    {
        if (node == null)
        {
            return;
        }
        node.close();
        node.awaitClose(30, TimeUnit.SECONDS);
        node = null;
    }

    /** The directory {@code fs} snapshot repositories of this node may be registered under ({@code path.repo}). */
    public Path snapshotDirectory()
    {
        return home.resolve("snapshots");
    }

    /** Registers an {@code fs} snapshot repository named {@code name} under {@link #snapshotDirectory()}. */
    public void registerFsRepository(final String name)
    {
        final HttpResponse<String> answer = request("PUT", "/_snapshot/" + name, "{\"type\": \"fs\", \"settings\": " +
            "{\"location\": \"" + snapshotDirectory().resolve(name).toString().replace("\\", "\\\\") + "\"}}");
        if (answer.statusCode() != 200)
        {
            throw new IllegalStateException("registering repository " + name + ": " + answer.statusCode() + " " +
                answer.body());
        }
    }

    public String url()
    {
        return "http://127.0.0.1:" + httpPort;
    }

    public int httpPort()
    {
        return httpPort;
    }

    /** A plain HTTP call to the node, for assertions that should not depend on the client under test. */
    public HttpResponse<String> request(final String method, final String path, final String body)
    {
        try
        {
            final HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url() + path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
            return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Makes everything indexed so far searchable, then counts the documents of {@code index} (0 if it is missing). */
    public long count(final String index)
    {
        if (request("POST", "/" + index + "/_refresh", null).statusCode() == 404)
        {
            return 0;
        }
        final HttpResponse<String> answer = request("GET", "/" + index + "/_count", null);
        final String body = answer.body();
        final int at = body.indexOf("\"count\":");
        if (answer.statusCode() != 200 || at < 0)
        {
            throw new IllegalStateException("count of " + index + ": " + answer.statusCode() + " " + body);
        }
        int end = at + 8;
        while (end < body.length() && Character.isDigit(body.charAt(end)))
        {
            end++;
        }
        return Long.parseLong(body.substring(at + 8, end));
    }

    private void awaitGreen() throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true)
        {
            try
            {
                if (request("GET", "/_cluster/health?wait_for_status=yellow&timeout=5s", null).statusCode() == 200)
                {
                    return;
                }
            }
            catch (final UncheckedIOException e)
            {
                if (System.nanoTime() > deadline)
                {
                    throw e;
                }
            }
            if (System.nanoTime() > deadline)
            {
                throw new IllegalStateException("OpenSearch node on port " + httpPort + " did not become healthy");
            }
            Thread.sleep(100);
        }
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            return socket.getLocalPort();
        }
    }

    @Override
    public void close() throws Exception
    {
        stop();
    }

    private static final class EmbeddedNode extends Node
    {
        EmbeddedNode(final Settings settings)
        {
            super(InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null, () -> "n1"),
                List.of(Netty4Plugin.class), true);
        }
    }
}
