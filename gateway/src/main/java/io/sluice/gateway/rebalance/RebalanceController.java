package io.sluice.gateway.rebalance;

import io.sluice.gateway.exporting.ExportingOutcome;
import io.sluice.gateway.management.ManagementController;
import io.sluice.gateway.web.ManagementErrorBody;
import io.sluice.gateway.management.ManagementErrorHandler;
import io.sluice.gateway.management.ManagementException;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * {@code POST /actuator/rebalance} on the management server: moves each partition's leadership to its preferred
 * broker where that replica is in sync. Works with a plain {@code curl -X POST}; it takes no parameters, so a query
 * parameter or a body is refused with 400 before anything is sent. 200 when every partition is on its preferred
 * broker afterwards, 503 otherwise, with one entry per partition saying where its leader is and why.
 * <p>
 * The service is looked up lazily, so a test context that scans every management controller but does not build
 * the rebalance service still starts (and answers 503 here).
 */
@ManagementController
@RequestMapping("${management.endpoints.web.base-path:/actuator}/rebalance")
public class RebalanceController
{
    private final ObjectProvider<RebalanceService> service;

    public RebalanceController(final ObjectProvider<RebalanceService> service)
    {
        this.service = service;
    }

    @PostMapping(produces = MediaType.APPLICATION_JSON_VALUE)
    public CompletableFuture<ResponseEntity<RebalanceResult>> rebalance(final HttpServletRequest request)
        throws IOException
    {
        // Query parameters never reach here: StrictQueryParameters refuses every one (rebalance takes none).
        final String body = new String(request.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!body.isEmpty() && !body.equals("{}") || body.isEmpty() && request.getContentLengthLong() > 0)
        {
            throw new ManagementException(HttpStatus.BAD_REQUEST, "rebalance takes no request body; send none");
        }
        final RebalanceService rebalance = service.getIfAvailable();
        if (rebalance == null)
        {
            throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "leader balance is not available on this gateway");
        }
        return rebalance.rebalance().thenApply((result) -> ResponseEntity
            .status(result.result() == ExportingOutcome.SUCCEEDED ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE)
            .contentType(MediaType.APPLICATION_JSON)
            .body(result));
    }

    @ExceptionHandler(ManagementException.class)
    public ResponseEntity<ManagementErrorBody> onRefused(final ManagementException e)
    {
        return ManagementErrorHandler.answer(e.status(), e.getMessage());
    }
}
