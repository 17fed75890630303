package io.sluice.gateway.exporting;

import io.sluice.gateway.security.ManagementController;
import io.sluice.gateway.security.ManagementErrorBody;
import io.sluice.gateway.security.ManagementErrorHandler;
import io.sluice.protocol.cluster.PartitionReplica;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;

import java.io.IOException;
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
    private final ExportingControlService service;
    private final ExportingTargetsReader targetsReader = new ExportingTargetsReader();

    public ExportingController(final ExportingControlService service)
    {
        this.service = service;
    }

    @PostMapping(path = "/pause", produces = MediaType.APPLICATION_JSON_VALUE)
    public CompletableFuture<ResponseEntity<ExportingOperationResult>> pause(
        @RequestParam(name = "soft", required = false) final String soft, final HttpServletRequest request)
        throws IOException
    {
        final boolean isSoft = parseSoft(soft);
        return service.pause(isSoft, readTargets(request)).thenApply(ExportingController::answer);
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
        // Read the raw body: no Content-Type is needed, and an empty body means every pair.
        return targetsReader.read(request.getInputStream().readAllBytes());
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
