package io.sluice.gateway.records;

import io.sluice.gateway.broker.AppendId;
import io.sluice.gateway.broker.BrokerFailure;
import io.sluice.gateway.config.GatewayProperties;
import io.sluice.gateway.config.RecordsProperties;
import io.sluice.gateway.json.JsonSyntaxError;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.concurrent.Futures;
import io.sluice.protocol.message.AppendLimits;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * {@code POST /v1/records}: one JSON object {@code {"key": "...", "payload": ...}} or an array of them.
 * Answers once every record is committed, with its partition and position (an array, in request order,
 * for an array). The payload is forwarded as compact JSON text; decimals are kept exactly as written.
 * <p>
 * An {@code Idempotency-Key} header (1 to {@value #MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters) makes the
 * request repeatable: the same key and body within {@code sluice.records.idempotency-window} answer as the first
 * time did and append nothing again; the same key with another body is a 422.
 */
@RestController
public class RecordsController
{
    private static final Logger LOG = LoggerFactory.getLogger(RecordsController.class);
    static final String IDEMPOTENCY_KEY = "Idempotency-Key";
    static final int MAX_IDEMPOTENCY_KEY_LENGTH = 128;

    private final JsonMapper json = JsonMapper.builder()
        .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .build();
    private final RecordsService records;
    private final long maxPayloadBytes;
    private final long maxRequestBytes;
    private final Duration idempotencyWindow;

    public RecordsController(final RecordsService records, final GatewayProperties properties, final RecordsProperties recordsProperties)
    {
        this.records = records;
        this.idempotencyWindow = recordsProperties.getIdempotencyWindow();
        this.maxPayloadBytes = properties.getMaxPayloadBytes().toBytes();
        if (maxPayloadBytes > AppendLimits.MAX_PAYLOAD_BYTES)
        {
            throw new InvalidClusterConfigException("sluice.gateway.max-payload-bytes", "at most " +
                AppendLimits.MAX_PAYLOAD_BYTES + " bytes (the brokers refuse larger payloads), was " + maxPayloadBytes);
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
        final String idempotencyKey = idempotencyKey(request);
        final byte[] body = readBody(request);
        final JsonNode root = parse(body);
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
        if (incoming.isEmpty() && idempotencyKey == null)
        {
            return CompletableFuture.completedFuture(ResponseEntity.ok(List.of()));
        }
        final long digest = idempotencyKey == null ? 0 : AppendId.digest(body);
        return records.write(incoming, idempotencyKey, digest).handle((positions, error) ->
        {
            if (error != null)
            {
                return failure(error, idempotencyKey);
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

    /** The request's idempotency key, null without one; anything but one header of printable ASCII is refused. */
    static String idempotencyKey(final HttpServletRequest request)
    {
        final List<String> values = Collections.list(request.getHeaders(IDEMPOTENCY_KEY));
        if (values.isEmpty())
        {
            return null;
        }
        if (values.size() > 1)
        {
            throw new InvalidRecordException("invalid_idempotency_key",
                IDEMPOTENCY_KEY + " is given " + values.size() + " times; give it once");
        }
        final String key = values.get(0);
        if (key.isEmpty() || key.length() > MAX_IDEMPOTENCY_KEY_LENGTH)
        {
            throw new InvalidRecordException("invalid_idempotency_key", IDEMPOTENCY_KEY + " must be 1 to " +
                MAX_IDEMPOTENCY_KEY_LENGTH + " printable ASCII characters, was " + key.length() + " characters");
        }
        for (int i = 0; i < key.length(); i++)
        {
            final char c = key.charAt(i);
            if (c < 0x20 || c > 0x7e)
            {
                throw new InvalidRecordException("invalid_idempotency_key", IDEMPOTENCY_KEY +
                    " must be printable ASCII; character " + i + " is U+" + String.format("%04X", (int)c));
            }
        }
        return key;
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
        Utf8.requireValid(body);
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
        if (Utf8.mayEscapeSurrogates(body))
        {
            Utf8.requireNoLoneSurrogates(root, "the request");
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
        if (key != null && key.isString())
        {
            final int keyBytes = key.asString().getBytes(StandardCharsets.UTF_8).length;
            if (keyBytes > AppendLimits.MAX_KEY_BYTES)
            {
                throw new InvalidRecordException("key_too_large", where + ": key of " + keyBytes +
                    " bytes exceeds the maximum of " + AppendLimits.MAX_KEY_BYTES + " bytes (UTF-8)");
            }
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

    private ResponseEntity<Object> failure(final Throwable error, final String idempotencyKey)
    {
        final Throwable cause = Futures.unwrapAll(error);
        final BrokerFailure failure = BrokerFailure.of(cause);
        if (BrokerFailure.errorCode(cause) == ErrorCode.CONFLICT && idempotencyKey != null)
        {
            return ResponseEntity.unprocessableContent().contentType(MediaType.APPLICATION_JSON)
                .body(Map.of("error", "idempotency_key_reused", "message", IDEMPOTENCY_KEY + " '" + idempotencyKey +
                    "' was already used with a different request body within the idempotency window (" +
                    idempotencyWindow + ", sluice.records.idempotency-window); nothing was appended"));
        }
        if (BrokerFailure.errorCode(cause) == ErrorCode.DISK_FULL)
        {
            // Nothing was appended; the broker takes appends again by itself once space is back.
            return ResponseEntity.status(HttpStatus.INSUFFICIENT_STORAGE).contentType(MediaType.APPLICATION_JSON)
                .body(Map.of("error", "disk-full", "message", String.valueOf(cause.getMessage())));
        }
        final HttpStatus status;
        final String code;
        switch (failure)
        {
            case TIMED_OUT, UNREACHABLE, UNAVAILABLE ->
            {
                status = HttpStatus.SERVICE_UNAVAILABLE;
                code = "unavailable";
            }
            case REFUSED, MALFORMED, TRANSPORT ->
            {
                status = HttpStatus.BAD_GATEWAY;
                code = "broker_error";
            }
            default ->
            {
                status = HttpStatus.INTERNAL_SERVER_ERROR;
                code = "internal_error";
            }
        }
        if (status != HttpStatus.SERVICE_UNAVAILABLE)
        {
            LOG.warn("append failed: {}", cause.toString());
        }
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON)
            .body(Map.of("error", code, "message", String.valueOf(cause.getMessage())));
    }
}
