package io.sluice.gateway.exporting;

import io.sluice.gateway.management.ManagementController;
import io.sluice.gateway.web.ManagementErrorBody;
import io.sluice.gateway.management.ManagementErrorHandler;
import io.sluice.protocol.cluster.PartitionReplica;
import jakarta.servlet.http.HttpServletRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.net.URLDecoder;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * {@code /actuator/exporting} on the management server: pause, soft pause and resume exporting, and the
 * state of every pair. Works with a plain {@code curl -X POST} (no body, no Content-Type); the optional
 * body narrows the targets. 200 when every target succeeded, 503 when any failed, 504 when none failed
 * and any timed out, 400 (nothing sent) for a bad body or an unknown pair.
 */
@ManagementController
@RequestMapping("${management.endpoints.web.base-path:/actuator}/exporting")
public class ExportingController
{
    /** Largest body read: 64 KiB holds thousands of targets. */
    static final int MAX_BODY_BYTES = 64 * 1024;

    private final ExportingControlService service;
    private final ExportingTargetsReader targetsReader = new ExportingTargetsReader();

    private static final Logger LOG = LoggerFactory.getLogger(ExportingController.class);

    public ExportingController(final ExportingControlService service, final ObjectProvider<JsonMapper> json)
    {
        this.service = service;
        warmUp(json.getIfAvailable());
    }

    /**
     * Reads a targets body and writes an answer once at start, so the first pause an operator sends does not pay for
     * loading and building the JSON readers and writers of these types (issue 30: the first pause after a start took
     * several times a warm one). Nothing is sent; a failure here only costs the first call its warmth.
     */
    private void warmUp(final JsonMapper json)
    {
        try
        {
            final List<PartitionReplica> sample = List.of(new PartitionReplica(0, 1), new PartitionReplica(1, 1));
            targetsReader.read(("{\"targets\":[{\"brokerId\":0,\"partitionId\":1},{\"brokerId\":1,\"partitionId\":1}]}")
                .getBytes(StandardCharsets.UTF_8));
            final ExportingOperationResult result = new ExportingOperationResult(ExportingOperation.PAUSE,
                ExportingOutcome.FAILED, List.of(TargetResult.succeeded(sample.get(0)), TargetResult.failed(sample.get(1), "warm-up")));
            answer(result);
            if (json != null)
            {
                json.writeValueAsBytes(result);
                json.writeValueAsBytes(service.status());
            }
        }
        catch (final RuntimeException e)
        {
            LOG.debug("warming the exporting answers up failed: {}", e.toString());
        }
    }

    @PostMapping(path = "/pause", produces = MediaType.APPLICATION_JSON_VALUE)
    public CompletableFuture<ResponseEntity<ExportingOperationResult>> pause(final HttpServletRequest request)
        throws IOException
    {
        // The body first: reading a query parameter through the servlet API would consume a form-encoded body.
        final Optional<List<PartitionReplica>> targets = readTargets(request);
        final boolean isSoft = parseSoft(queryParameter(request, "soft"));
        final Optional<Duration> lease = parseLease(queryParameter(request, "lease"));
        return service.pause(isSoft, targets, lease).thenApply(ExportingController::answer);
    }

    @PostMapping(path = "/resume", produces = MediaType.APPLICATION_JSON_VALUE)
    public CompletableFuture<ResponseEntity<ExportingOperationResult>> resume(final HttpServletRequest request)
        throws IOException
    {
        return service.resume(readTargets(request)).thenApply(ExportingController::answer);
    }

    @GetMapping(produces = MediaType.APPLICATION_JSON_VALUE)
    public ExportingStatus status()
    {
        return service.status();
    }

    @ExceptionHandler(InvalidTargetsException.class)
    public ResponseEntity<ManagementErrorBody> onInvalidTargets(final InvalidTargetsException e)
    {
        return ManagementErrorHandler.answer(HttpStatus.BAD_REQUEST, e.getMessage());
    }

    @ExceptionHandler(BodyTooLargeException.class)
    public ResponseEntity<ManagementErrorBody> onBodyTooLarge(final BodyTooLargeException e)
    {
        return ManagementErrorHandler.answer(HttpStatus.CONTENT_TOO_LARGE, e.getMessage());
    }

    /** A body over {@link #MAX_BODY_BYTES}: 413. */
    static final class BodyTooLargeException extends RuntimeException
    {
        BodyTooLargeException(final String message)
        {
            super(message);
        }
    }

    static HttpStatus statusOf(final ExportingOutcome result)
    {
        return switch (result)
        {
            case SUCCEEDED -> HttpStatus.OK;
            case FAILED -> HttpStatus.SERVICE_UNAVAILABLE;
            case TIMED_OUT -> HttpStatus.GATEWAY_TIMEOUT;
        };
    }

    private static ResponseEntity<ExportingOperationResult> answer(final ExportingOperationResult result)
    {
        return ResponseEntity.status(statusOf(result.result())).contentType(MediaType.APPLICATION_JSON).body(result);
    }

    private Optional<List<PartitionReplica>> readTargets(final HttpServletRequest request) throws IOException
    {
        // The raw body, whatever its Content-Type (curl -d sends a form type): an empty body means every pair.
        // Capped: a target list of every pair of a large cluster is a few KB, so a huge body is never held whole.
        final byte[] body = request.getInputStream().readNBytes(MAX_BODY_BYTES + 1);
        if (body.length > MAX_BODY_BYTES)
        {
            throw new BodyTooLargeException("the request body exceeds the maximum of " + MAX_BODY_BYTES +
                " bytes for a list of targets; nothing was sent");
        }
        if (body.length == 0 && request.getContentLengthLong() > 0)
        {
            // Something parsed it as form parameters already; guessing "every pair" here would be wrong.
            throw new InvalidTargetsException("the request body could not be read as JSON; send it with " +
                "Content-Type: application/json");
        }
        return targetsReader.read(body);
    }

    /** A query-string parameter, read without touching the body; null when absent, "" when given without value. */
    static String queryParameter(final HttpServletRequest request, final String name)
    {
        final String query = request.getQueryString();
        if (query == null)
        {
            return null;
        }
        String value = null;
        for (final String pair : query.split("&"))
        {
            final int equals = pair.indexOf('=');
            final String key = URLDecoder.decode(equals < 0 ? pair : pair.substring(0, equals), StandardCharsets.UTF_8);
            if (key.equals(name))
            {
                if (value != null)
                {
                    throw new InvalidTargetsException(name + " is given more than once");
                }
                value = equals < 0 ? "" : URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8);
            }
        }
        return value;
    }

    /** {@code lease}: an ISO-8601 duration ({@code PT30M}); its range is the service's to check. */
    static Optional<Duration> parseLease(final String lease)
    {
        if (lease == null)
        {
            return Optional.empty();
        }
        try
        {
            return Optional.of(Duration.parse(lease.trim()));
        }
        catch (final DateTimeParseException e)
        {
            throw new InvalidTargetsException("lease must be an ISO-8601 duration such as PT30M, was '" + lease +
                "'; nothing was paused");
        }
    }

    private static boolean parseSoft(final String soft)
    {
        if (soft == null || soft.equalsIgnoreCase("false"))
        {
            return false;
        }
        if (soft.isEmpty() || soft.equalsIgnoreCase("true"))
        {
            return true;
        }
        throw new InvalidTargetsException("soft must be true or false, was '" + soft + "'");
    }
}
