package io.sluice.gateway.management;

import io.sluice.gateway.json.JsonSyntaxError;
import io.sluice.gateway.web.ManagementErrorBody;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ResponseStatusException;

/**
 * Turns every failure of a management request into {@code {"error": ..., "message": ...}} with its status:
 * {@link ManagementException}s, Spring MVC's own errors (no such path 404, wrong method 405, bad parameter
 * 400, ...) and, as 500, anything unexpected. Lowest precedence, so a controller's own handlers win.
 */
@RestControllerAdvice
@ManagementComponent
@Order(Ordered.LOWEST_PRECEDENCE)
public class ManagementErrorHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(ManagementErrorHandler.class);

    @ExceptionHandler(ManagementException.class)
    public ResponseEntity<ManagementErrorBody> onManagementException(final ManagementException e)
    {
        return answer(e.status(), e.getMessage());
    }

    @ExceptionHandler(HttpMessageNotReadableException.class)
    public ResponseEntity<ManagementErrorBody> onUnreadableBody(final HttpMessageNotReadableException e)
    {
        return answer(HttpStatus.BAD_REQUEST, "malformed request body: " + JsonSyntaxError.describe(e.getMostSpecificCause()));
    }

    @ExceptionHandler(ResponseStatusException.class)
    public ResponseEntity<ManagementErrorBody> onResponseStatus(final ResponseStatusException e)
    {
        return answer(e.getStatusCode(), e.getReason() != null ? e.getReason() : e.getMessage());
    }

    @ExceptionHandler(Exception.class)
    public ResponseEntity<ManagementErrorBody> onException(final Exception e)
    {
        if (e instanceof ErrorResponse errorResponse)
        {
            final String detail = errorResponse.getBody().getDetail();
            return answer(errorResponse.getStatusCode(), detail != null ? detail : e.getMessage());
        }
        LOG.error("management request failed", e);
        return answer(HttpStatus.INTERNAL_SERVER_ERROR, e.getClass().getSimpleName() + ": " + e.getMessage());
    }

    public static ResponseEntity<ManagementErrorBody> answer(final HttpStatusCode status, final String message)
    {
        return ResponseEntity.status(status)
            .contentType(MediaType.APPLICATION_JSON)
            .body(ManagementErrorBody.of(status, message));
    }
}
