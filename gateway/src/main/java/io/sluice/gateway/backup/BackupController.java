package io.sluice.gateway.backup;

import io.sluice.gateway.management.ManagementController;
import io.sluice.gateway.management.ManagementErrorHandler;
import io.sluice.gateway.management.ManagementException;
import io.sluice.gateway.web.ManagementErrorBody;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;

/**
 * Backups on the management server (CONTRACT §8): {@code POST /actuator/backups} (optional body
 * {@code {"backupId": N}}; 202 once the cut is committed), {@code GET /actuator/backups[/{id}]},
 * {@code DELETE /actuator/backups/{id}} and {@code POST /actuator/backups/{id}/verify}. Thin: {@link BackupService}
 * does the work. The body and the id are checked before anything is asked of the cluster.
 */
@ManagementController
@RequestMapping("${management.endpoints.web.base-path:/actuator}/backups")
public class BackupController
{
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final ObjectProvider<BackupService> service;

    public BackupController(final ObjectProvider<BackupService> service)
    {
        this.service = service;
    }

    @PostMapping(produces = MediaType.APPLICATION_JSON_VALUE)
    public CompletableFuture<ResponseEntity<Object>> take(final HttpServletRequest request) throws IOException
    {
        final Long backupId = requestedId(new String(request.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        return service().take(backupId).handle((accepted, error) -> error == null ?
            ResponseEntity.status(HttpStatus.ACCEPTED).contentType(MediaType.APPLICATION_JSON).body(accepted) :
            error(error));
    }

    @GetMapping(produces = MediaType.APPLICATION_JSON_VALUE)
    public BackupView.BackupList list()
    {
        return service().list();
    }

    @GetMapping(path = "/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
    public BackupView status(@PathVariable("id") final String id)
    {
        return service().status(parseId(id));
    }

    @DeleteMapping(path = "/{id}")
    public ResponseEntity<Void> delete(@PathVariable("id") final String id)
    {
        service().delete(parseId(id));
        return ResponseEntity.noContent().build();
    }

    @PostMapping(path = "/{id}/verify", produces = MediaType.APPLICATION_JSON_VALUE)
    public BackupView.Verification verify(@PathVariable("id") final String id)
    {
        return service().verify(parseId(id));
    }

    /** The body's backup id: none for an empty body or {@code {}}; else exactly {@code {"backupId": N}}, N > 0. */
    static Long requestedId(final String body)
    {
        if (body.isBlank())
        {
            return null;
        }
        final JsonNode root;
        try
        {
            root = JSON.readTree(body);
        }
        catch (final JacksonException e)
        {
            throw new ManagementException(HttpStatus.BAD_REQUEST, "the body is not JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject())
        {
            throw new ManagementException(HttpStatus.BAD_REQUEST, "the body must be a JSON object {\"backupId\": N}");
        }
        final Iterator<String> names = root.propertyNames().iterator();
        while (names.hasNext())
        {
            final String name = names.next();
            if (!name.equals("backupId"))
            {
                throw new ManagementException(HttpStatus.BAD_REQUEST, "unknown field '" + name +
                    "': the body takes only backupId");
            }
        }
        final JsonNode id = root.get("backupId");
        if (id == null || id.isNull())
        {
            return null;
        }
        if (!id.isIntegralNumber() || !id.canConvertToLong() || id.asLong() < 1)
        {
            throw new ManagementException(HttpStatus.BAD_REQUEST, "backupId must be a positive integer, was " + id);
        }
        return id.asLong();
    }

    static long parseId(final String id)
    {
        try
        {
            final long parsed = Long.parseLong(id);
            if (parsed > 0)
            {
                return parsed;
            }
        }
        catch (final NumberFormatException e)
        {
            // answered below
        }
        throw new ManagementException(HttpStatus.BAD_REQUEST, "a backup id is a positive integer, was '" + id + "'");
    }

    private BackupService service()
    {
        final BackupService backups = service.getIfAvailable();
        if (backups == null)
        {
            throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "backups are not available on this gateway");
        }
        return backups;
    }

    private static ResponseEntity<Object> error(final Throwable error)
    {
        final Throwable cause = io.sluice.protocol.concurrent.Futures.unwrapAll(error);
        final ResponseEntity<ManagementErrorBody> answer = cause instanceof ManagementException refused ?
            ManagementErrorHandler.answer(refused.status(), refused.getMessage()) :
            ManagementErrorHandler.answer(HttpStatus.INTERNAL_SERVER_ERROR, String.valueOf(cause));
        return ResponseEntity.status(answer.getStatusCode()).headers(answer.getHeaders()).body(answer.getBody());
    }

    @ExceptionHandler(ManagementException.class)
    public ResponseEntity<ManagementErrorBody> onRefused(final ManagementException e)
    {
        return ManagementErrorHandler.answer(e.status(), e.getMessage());
    }
}
