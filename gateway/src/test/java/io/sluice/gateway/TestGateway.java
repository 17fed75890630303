package io.sluice.gateway;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The gateway application of a cluster test on random loopback ports, and the plain HTTP calls tests make to it:
 * management paths carry the token when one is set, records go to the client API.
 */
public final class TestGateway implements AutoCloseable
{
    public static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);

    private final ConfigurableApplicationContext context;
    private final String api;
    private final String management;
    private final String token;

    private TestGateway(final ConfigurableApplicationContext context, final String token)
    {
        this.context = context;
        this.api = "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port");
        this.management = "http://127.0.0.1:" + context.getEnvironment().getProperty("local.management.port");
        this.token = token;
    }

    /**
     * Starts a gateway for {@code brokers} ({@code sluice.cluster.brokers}) and {@code partitions} partitions, with the
     * management token {@code token} (null: none) and {@code properties} as further {@code --name=value} arguments.
     */
    public static TestGateway start(final String brokers, final int partitions, final String token,
        final String... properties)
    {
        final List<String> args = new ArrayList<>(List.of(
            "--server.port=0",
            "--management.server.port=0",
            "--management.server.address=127.0.0.1",
            "--sluice.cluster.brokers=" + brokers,
            "--sluice.cluster.partitions=" + partitions));
        if (token != null)
        {
            args.add("--sluice.management.token=" + token);
        }
        args.addAll(List.of(properties));
        return new TestGateway(new SpringApplicationBuilder(GatewayApplication.class).run(args.toArray(String[]::new)),
            token);
    }

    /** The client API's base address. */
    public String api()
    {
        return api;
    }

    /** The management server's base address. */
    public String management()
    {
        return management;
    }

    public HttpResponse<String> get(final String path)
    {
        return send(management(path).GET().build());
    }

    /** A POST to a management path, with the token; {@code body} may be null. */
    public HttpResponse<String> post(final String path, final String body)
    {
        final HttpRequest.Builder request = management(path);
        if (body == null)
        {
            return send(request.POST(HttpRequest.BodyPublishers.noBody()).build());
        }
        return send(request.header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build());
    }

    public HttpResponse<String> delete(final String path)
    {
        return send(management(path).DELETE().build());
    }

    /** {@code POST /v1/records} with a JSON body. */
    public HttpResponse<String> write(final String body)
    {
        return send(HttpRequest.newBuilder(URI.create(api + "/v1/records"))
            .header("content-type", "application/json")
            .timeout(CALL_TIMEOUT)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build());
    }

    /** {@code GET /actuator/exporting}, parsed. */
    public JsonNode exporting()
    {
        return json(get("/actuator/exporting"));
    }

    /** The cluster's exporting state as the status view shows it. */
    public String exportingState()
    {
        return exporting().get("state").asString();
    }

    public boolean ready()
    {
        return get("/actuator/health/readiness").statusCode() == 200;
    }

    public static JsonNode json(final HttpResponse<String> response)
    {
        return JSON.readTree(response.body());
    }

    public static HttpResponse<String> send(final HttpRequest request)
    {
        try
        {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
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

    private HttpRequest.Builder management(final String path)
    {
        final HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(management + path)).timeout(CALL_TIMEOUT);
        return token == null ? builder : builder.header("Authorization", "Bearer " + token);
    }

    @Override
    public void close()
    {
        context.close();
    }
}
