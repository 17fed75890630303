package io.sluice.qa.cluster;

import io.sluice.protocol.cluster.PartitionReplica;
import tools.jackson.databind.JsonNode;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A small HTTP client of one gateway: the client API ({@code server.port}) and the management API
 * ({@code management.server.port}). Management calls carry the bearer token when one is configured.
 * Thread-safe.
 */
public final class GatewayClient
{
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    private final HttpClient http;
    private final URI clientBase;
    private final URI managementBase;
    private final String token;
    private final Duration callTimeout;

    public GatewayClient(final URI clientBase, final URI managementBase, final String token, final Duration callTimeout)
    {
        this(clientBase, managementBase, token, callTimeout, null);
    }

    /** @param tls for https bases: the context trusting the gateway's CA, or null for the JVM's default. */
    public GatewayClient(
        final URI clientBase, final URI managementBase, final String token, final Duration callTimeout,
        final SSLContext tls)
    {
        final HttpClient.Builder builder = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(CONNECT_TIMEOUT);
        if (tls != null)
        {
            builder.sslContext(tls);
        }
        this.http = builder.build();
        this.clientBase = clientBase;
        this.managementBase = managementBase;
        this.token = token;
        this.callTimeout = callTimeout;
    }

    public URI clientBase()
    {
        return clientBase;
    }

    public URI managementBase()
    {
        return managementBase;
    }

    // ---------------------------------------------------------------- client API

    /** {@code POST /v1/records} with a raw body. */
    public HttpAnswer postRecords(final String jsonBody)
    {
        return send(HttpRequest.newBuilder(clientBase.resolve("/v1/records"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(jsonBody, StandardCharsets.UTF_8)), "POST /v1/records");
    }

    /** {@code POST /v1/records} with a raw body and an {@code Idempotency-Key} header. */
    public HttpAnswer postRecords(final String jsonBody, final String idempotencyKey)
    {
        return send(HttpRequest.newBuilder(clientBase.resolve("/v1/records"))
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", idempotencyKey)
            .POST(HttpRequest.BodyPublishers.ofString(jsonBody, StandardCharsets.UTF_8)), "POST /v1/records");
    }

    /** Writes one record; fails with {@link GatewayException} unless the gateway answers 200. */
    public WrittenRecord write(final String key, final String payloadJson)
    {
        final RecordToWrite record = new RecordToWrite(key, payloadJson);
        final HttpAnswer answer = postRecords(record.toJson());
        if (answer.status() != 200)
        {
            throw new GatewayException("write of key " + key, answer);
        }
        final JsonNode json = answer.json();
        return new WrittenRecord(key, payloadJson, json.path("partitionId").asInt(-1), json.path("position").asLong(-1));
    }

    /** Writes a batch as one JSON array; fails with {@link GatewayException} unless the gateway answers 200. */
    public List<WrittenRecord> writeBatch(final List<RecordToWrite> records)
    {
        return writeBatch(records, null);
    }

    /**
     * As {@link #writeBatch(List)}, under {@code idempotencyKey} (null for none): sent again with the same key after a
     * failed answer, the batch is appended at most once (an answer such as a 504 leaves open whether it was).
     */
    public List<WrittenRecord> writeBatch(final List<RecordToWrite> records, final String idempotencyKey)
    {
        final StringBuilder body = new StringBuilder(records.size() * 96).append('[');
        for (int i = 0; i < records.size(); i++)
        {
            if (i > 0)
            {
                body.append(',');
            }
            body.append(records.get(i).toJson());
        }
        final String array = body.append(']').toString();
        final HttpAnswer answer = idempotencyKey == null ? postRecords(array) : postRecords(array, idempotencyKey);
        if (answer.status() != 200)
        {
            throw new GatewayException("write of a batch of " + records.size(), answer);
        }
        final JsonNode json = answer.json();
        if (!json.isArray() || json.size() != records.size())
        {
            throw new GatewayException("batch of " + records.size() + " answered with a different shape", answer);
        }
        final List<WrittenRecord> written = new ArrayList<>(records.size());
        for (int i = 0; i < records.size(); i++)
        {
            final JsonNode item = json.get(i);
            written.add(new WrittenRecord(records.get(i).key(), records.get(i).payloadJson(),
                item.path("partitionId").asInt(-1), item.path("position").asLong(-1)));
        }
        return written;
    }

    // ---------------------------------------------------------------- management API

    /** A management call with the token (when configured); {@code body} may be null. */
    public HttpAnswer management(final String method, final String path, final String body)
    {
        return management(method, path, body, token);
    }

    /** A management call with exactly this bearer token ({@code null}: no Authorization header). */
    public HttpAnswer management(final String method, final String path, final String body, final String bearerToken)
    {
        final HttpRequest.Builder request = HttpRequest.newBuilder(managementBase.resolve(path));
        if (bearerToken != null)
        {
            request.header("Authorization", "Bearer " + bearerToken);
        }
        if (body != null)
        {
            request.header("Content-Type", "application/json");
            request.method(method, HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        }
        else
        {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return send(request, method + " " + path);
    }

    public HttpAnswer get(final String path)
    {
        return management("GET", path, null);
    }

    /** {@code POST /actuator/exporting/pause} on every pair. */
    public ExportingControlAnswer pause()
    {
        return exportingControl("pause", null);
    }

    /** {@code POST /actuator/exporting/pause?soft=true} on every pair. */
    public ExportingControlAnswer softPause()
    {
        return exportingControl("pause?soft=true", null);
    }

    /** {@code POST /actuator/exporting/resume} on every pair. */
    public ExportingControlAnswer resume()
    {
        return exportingControl("resume", null);
    }

    /** {@code POST /actuator/exporting/<action>} with a {@code {"targets": [...]}} body (or none when null). */
    public ExportingControlAnswer exportingControl(final String action, final Collection<PartitionReplica> targets)
    {
        return ExportingControlAnswer.parse(management("POST", "/actuator/exporting/" + action, targetsBody(targets)));
    }

    /** {@code GET /actuator/exporting}. */
    public ExportingStatus exporting()
    {
        return ExportingStatus.parse(get("/actuator/exporting"));
    }

    /**
     * Whether the cluster view ({@code /actuator/partitions}, which lists every partition of the distribution) shows each
     * partition led by its preferred broker.
     */
    public boolean preferredBrokersLead()
    {
        final tools.jackson.databind.JsonNode partitions = get("/actuator/partitions").json().path("partitions");
        if (partitions.isEmpty())
        {
            return false;
        }
        for (final tools.jackson.databind.JsonNode partition : partitions)
        {
            if (partition.path("leaderId").asInt(-1) != partition.path("preferredLeaderId").asInt(-2))
            {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code /actuator/health/readiness} answers 200 with status UP; false when unreachable. */
    public boolean isReady()
    {
        try
        {
            final HttpAnswer answer = get("/actuator/health/readiness");
            return answer.status() == 200 && "UP".equals(answer.json().path("status").asString(null));
        }
        catch (final GatewayException ex)
        {
            return false;
        }
    }

    public static String targetsBody(final Collection<PartitionReplica> targets)
    {
        if (targets == null)
        {
            return null;
        }
        final StringBuilder body = new StringBuilder("{\"targets\":[");
        boolean first = true;
        for (final PartitionReplica pair : targets)
        {
            if (!first)
            {
                body.append(',');
            }
            first = false;
            body.append("{\"brokerId\":").append(pair.brokerId())
                .append(",\"partitionId\":").append(pair.partitionId()).append('}');
        }
        return body.append("]}").toString();
    }

    private HttpAnswer send(final HttpRequest.Builder request, final String what)
    {
        final long start = System.nanoTime();
        try
        {
            final HttpResponse<String> response = http.send(
                request.timeout(callTimeout).build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return new HttpAnswer(response.statusCode(), response.body(), Duration.ofNanos(System.nanoTime() - start));
        }
        catch (final IOException ex)
        {
            throw new GatewayException(what + " failed after " +
                Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms", ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new GatewayException(what + " interrupted", ex);
        }
    }
}
