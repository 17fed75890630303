package io.sluice.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;

/**
 * A small real HTTP server on loopback standing in for the gateway's management API, to test the CLI
 * and the backup hook in isolation. Routes are {@code "METHOD /actuator/path"} (query excluded); every
 * request is recorded. Unrouted requests get the contract's 404 error JSON.
 */
public final class FakeGateway implements AutoCloseable
{
    /** One request as the server saw it. */
    public record Request(String method, String path, String query, Map<String, List<String>> headers, String body)
    {
        public String header(final String name)
        {
            for (final Map.Entry<String, List<String>> entry : headers.entrySet())
            {
                if (entry.getKey().equalsIgnoreCase(name) && !entry.getValue().isEmpty())
                {
                    return entry.getValue().get(0);
                }
            }
            return null;
        }
    }

    /** What to answer: a status and a JSON body, optionally after a delay (to provoke client timeouts). */
    public record Reply(int status, String body, Duration delay)
    {
        public static Reply json(final int status, final String body)
        {
            return new Reply(status, body, Duration.ZERO);
        }

        public static Reply error(final int status, final String error, final String message)
        {
            return json(status, "{\"error\": \"" + error + "\", \"message\": \"" + message + "\"}");
        }

        public Reply after(final Duration delay)
        {
            return new Reply(status, body, delay);
        }
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool(runnable ->
    {
        final Thread thread = new Thread(runnable, "fake-gateway");
        thread.setDaemon(true);
        return thread;
    });
    private final Map<String, Function<Request, Reply>> routes = new ConcurrentHashMap<>();
    private final List<Request> requests = new CopyOnWriteArrayList<>();

    private FakeGateway(final HttpServer server)
    {
        this.server = server;
    }

    public static FakeGateway start() throws IOException
    {
        final HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        final FakeGateway gateway = new FakeGateway(server);
        server.createContext("/", gateway::handle);
        server.setExecutor(gateway.executor);
        server.start();
        return gateway;
    }

    /** Routes {@code method path} (e.g. {@code "POST", "/actuator/exporting/pause"}) to a handler. */
    public FakeGateway on(final String method, final String path, final Function<Request, Reply> handler)
    {
        routes.put(method + " " + path, handler);
        return this;
    }

    public FakeGateway on(final String method, final String path, final Reply reply)
    {
        return on(method, path, request -> reply);
    }

    /** The management base URL, e.g. {@code http://127.0.0.1:41234}. */
    public String url()
    {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    public List<Request> requests()
    {
        return new ArrayList<>(requests);
    }

    public List<Request> requests(final String method, final String path)
    {
        final List<Request> matching = new ArrayList<>();
        for (final Request request : requests)
        {
            if (request.method().equals(method) && request.path().equals(path))
            {
                matching.add(request);
            }
        }
        return matching;
    }

    private void handle(final HttpExchange exchange) throws IOException
    {
        try (exchange)
        {
            final String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            final Request request = new Request(
                exchange.getRequestMethod(),
                exchange.getRequestURI().getPath(),
                exchange.getRequestURI().getRawQuery(),
                Map.copyOf(exchange.getRequestHeaders()),
                body);
            requests.add(request);
            final Function<Request, Reply> handler = routes.get(request.method() + " " + request.path());
            final Reply reply = handler != null ? handler.apply(request)
                : Reply.error(404, "Not Found", "no route " + request.method() + " " + request.path());
            if (!reply.delay().isZero())
            {
                Thread.sleep(reply.delay().toMillis());
            }
            final byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(reply.status(), bytes.length == 0 ? -1 : bytes.length);
            if (bytes.length > 0)
            {
                try (OutputStream out = exchange.getResponseBody())
                {
                    out.write(bytes);
                }
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close()
    {
        server.stop(0);
        executor.shutdownNow();
    }
}
