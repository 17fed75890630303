package io.sluice.gateway.records;

import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.gateway.broker.MalformedResponseException;
import io.sluice.gateway.config.GatewayProperties;
import io.sluice.gateway.json.JsonSyntaxError;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.message.RequestLimits;
import io.sluice.protocol.transport.PeerUnreachableException;
import io.sluice.protocol.transport.RequestTimeoutException;
import io.sluice.protocol.transport.TransportException;
import jakarta.servlet.http.HttpServletRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * {@code POST /v1/records}: one JSON object {@code {"key": "...", "payload": ...}} or an array of them.
 * Answers once every record is committed, with its partition and position (an array, in request order,
 * for an array). The payload is forwarded as compact JSON text; decimals are kept exactly as written.
 */
@RestController
public class RecordsController
{
    private static final Logger LOG = LoggerFactory.getLogger(RecordsController.class);

    private final JsonMapper json = JsonMapper.builder()
        .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .build();
    private final RecordsService records;
    private final long maxPayloadBytes;
    private final long maxRequestBytes;

    public RecordsController(final RecordsService records, final GatewayProperties properties)
    {
        this.records = records;
        this.maxPayloadBytes = properties.getMaxPayloadBytes().toBytes();
        if (maxPayloadBytes > RequestLimits.MAX_PAYLOAD_BYTES)
        {
            throw new InvalidClusterConfigException("sluice.gateway.max-payload-bytes", "at most " +
                RequestLimits.MAX_PAYLOAD_BYTES + " bytes (the brokers refuse larger payloads), was " + maxPayloadBytes);
        }
        this.maxRequestBytes = properties.getMaxRequestBytes().toBytes();
    }

    /**
     * Accepts any content type: the body is JSON whatever a bare {@code curl -d} claims. The raw stream is
     * read directly because Spring rebuilds a form-typed body from its decoded parameters.
     */
    @PostMapping(path = "/v1/records", produces = MediaType.APPLICATION_JSON_VALUE)
    public CompletableFuture<ResponseEntity<Object>> post(final HttpServletRequest request) throws IOException
    {
        final JsonNode root = parse(readBody(request));
        final boolean isArray = root.isArray();
        final List<RecordsService.IncomingRecord> incoming = new ArrayList<>();
        if (isArray)
        {
            for (int i = 0; i < root.size(); i++)
            {
                incoming.add(toRecord(root.get(i), "element " + i));
            }
        }
        else
        {
            incoming.add(toRecord(root, "the request"));
        }
        if (incoming.isEmpty())
        {
            return CompletableFuture.completedFuture(ResponseEntity.ok(List.of()));
        }
        return records.write(incoming).handle((positions, error) ->
        {
            if (error != null)
            {
                return failure(error);
            }
            return ResponseEntity.ok(isArray ? positions : positions.get(0));
        });
    }

    @ExceptionHandler(InvalidRecordException.class)
    public ResponseEntity<Map<String, String>> onInvalid(final InvalidRecordException e)
    {
        return ResponseEntity.badRequest().contentType(MediaType.APPLICATION_JSON)
            .body(Map.of("error", e.error(), "message", e.getMessage()));
    }

    private byte[] readBody(final HttpServletRequest request) throws IOException
    {
        try (InputStream in = request.getInputStream())
        {
            final byte[] body = in.readNBytes((int)Math.min(Integer.MAX_VALUE - 8, maxRequestBytes + 1));
            if (body.length > maxRequestBytes)
            {
                throw new InvalidRecordException("request_too_large", "the request body exceeds the maximum of " +
                    maxRequestBytes + " bytes (sluice.gateway.max-request-bytes)");
            }
            return body;
        }
    }

    private JsonNode parse(final byte[] body)
    {
        if (body == null || body.length == 0)
        {
            throw new InvalidRecordException("malformed_json", "the request body is empty; expected a JSON object or array");
        }
        final JsonNode root;
        try
        {
            root = json.readTree(body);
        }
        catch (final JacksonException e)
        {
            throw new InvalidRecordException("malformed_json", "the request body is not valid JSON: " + JsonSyntaxError.describe(e));
        }
        if (root == null || root.isMissingNode() || !(root.isObject() || root.isArray()))
        {
            throw new InvalidRecordException("invalid_record", "expected a JSON object or an array of objects");
        }
        return root;
    }

    private RecordsService.IncomingRecord toRecord(final JsonNode node, final String where)
    {
        if (!node.isObject())
        {
            throw new InvalidRecordException("invalid_record", where + " is not a JSON object");
        }
        for (final String field : node.propertyNames())
        {
            if (!"key".equals(field) && !"payload".equals(field))
            {
                throw new InvalidRecordException("invalid_record",
                    where + " has unknown field '" + field + "' (expected 'key' and 'payload')");
            }
        }
        final JsonNode key = node.get("key");
        if (key != null && !key.isNull() && !key.isString())
        {
            throw new InvalidRecordException("invalid_record", where + ": key must be a string");
        }
        if (key != null && key.isString() &&
            key.asString().getBytes(StandardCharsets.UTF_8).length > RequestLimits.MAX_KEY_BYTES)
        {
            throw new InvalidRecordException("invalid_record", where + ": key exceeds the maximum of " +
                RequestLimits.MAX_KEY_BYTES + " bytes (UTF-8)");
        }
        final JsonNode payload = node.get("payload");
        if (payload == null)
        {
            throw new InvalidRecordException("invalid_record", where + " has no payload");
        }
        final byte[] payloadBytes = json.writeValueAsBytes(payload);
        if (payloadBytes.length > maxPayloadBytes)
        {
            throw new InvalidRecordException("payload_too_large", where + ": payload of " + payloadBytes.length +
                " bytes exceeds the maximum of " + maxPayloadBytes + " bytes (sluice.gateway.max-payload-bytes)");
        }
        return new RecordsService.IncomingRecord(key == null || key.isNull() ? null : key.asString(), payloadBytes);
    }

    private static ResponseEntity<Object> failure(final Throwable error)
    {
        Throwable cause = error;
        while (cause instanceof CompletionException && cause.getCause() != null)
        {
            cause = cause.getCause();
        }
        final HttpStatus status;
        final String code;
        if (cause instanceof RequestTimeoutException || cause instanceof PeerUnreachableException)
        {
            status = HttpStatus.SERVICE_UNAVAILABLE;
            code = "unavailable";
        }
        else if (cause instanceof BrokerErrorException brokerError &&
            (brokerError.code() == ErrorCode.NOT_LEADER || brokerError.code() == ErrorCode.UNAVAILABLE ||
            brokerError.code() == ErrorCode.RESOURCE_EXHAUSTED || brokerError.code() == ErrorCode.TIMEOUT))
        {
            status = HttpStatus.SERVICE_UNAVAILABLE;
            code = "unavailable";
        }
        else if (cause instanceof BrokerErrorException || cause instanceof MalformedResponseException ||
            cause instanceof TransportException)
        {
            status = HttpStatus.BAD_GATEWAY;
            code = "broker_error";
        }
        else
        {
            status = HttpStatus.INTERNAL_SERVER_ERROR;
            code = "internal_error";
        }
        if (status != HttpStatus.SERVICE_UNAVAILABLE)
        {
            LOG.warn("append failed: {}", cause.toString());
        }
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON)
            .body(Map.of("error", code, "message", String.valueOf(cause.getMessage())));
    }
}
