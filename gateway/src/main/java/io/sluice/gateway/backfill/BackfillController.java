package io.sluice.gateway.backfill;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.sluice.gateway.management.ManagementController;
import io.sluice.gateway.web.ManagementErrorBody;
import io.sluice.gateway.management.ManagementErrorHandler;
import io.sluice.gateway.management.ManagementException;
import io.sluice.protocol.concurrent.Futures;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Reset to latest and backfill on the management server (CONTRACT §3):
 * {@code POST /actuator/exporters/{exporterId}/resetToLatestAndBackfill?backfillTaskCount=N[&dryRun=true]}
 * (202 started, 200 dry run), {@code GET /actuator/backfills[/{id}]} and {@code DELETE /actuator/backfills/{id}}.
 * Works with a plain {@code curl -X POST}. Thin: {@link BackfillService} does the work.
 * <p>
 * The service is looked up lazily, so a test context that scans every management controller but does not
 * build backfills still starts (and answers 503 here).
 */
@ManagementController
@RequestMapping("${management.endpoints.web.base-path:/actuator}")
public class BackfillController
{
    private final ObjectProvider<BackfillService> service;

    public BackfillController(final ObjectProvider<BackfillService> service)
    {
        this.service = service;
    }

    @PostMapping(path = "/exporters/{exporterId}/resetToLatestAndBackfill", produces = MediaType.APPLICATION_JSON_VALUE)
    public CompletableFuture<ResponseEntity<Object>> resetToLatestAndBackfill(
        @PathVariable("exporterId") final String exporterId,
        @RequestParam(name = "backfillTaskCount", required = false) final String backfillTaskCount,
        @RequestParam(name = "dryRun", required = false) final String dryRun)
    {
        final boolean isDryRun;
        try
        {
            isDryRun = parseDryRun(dryRun);
        }
        catch (final ManagementException e)
        {
            return CompletableFuture.completedFuture(error(e));
        }
        return isDryRun ?
            call(s -> s.plan(exporterId, backfillTaskCount), HttpStatus.OK) :
            call(s -> s.start(exporterId, backfillTaskCount), HttpStatus.ACCEPTED);
    }

    @GetMapping(path = "/backfills", produces = MediaType.APPLICATION_JSON_VALUE)
    public CompletableFuture<ResponseEntity<Object>> list()
    {
        return call(BackfillService::list, HttpStatus.OK);
    }

    @GetMapping(path = "/backfills/{backfillId}", produces = MediaType.APPLICATION_JSON_VALUE)
    public CompletableFuture<ResponseEntity<Object>> get(@PathVariable("backfillId") final String backfillId)
    {
        return call(s -> s.get(backfillId), HttpStatus.OK);
    }

    @DeleteMapping(path = "/backfills/{backfillId}", produces = MediaType.APPLICATION_JSON_VALUE)
    public CompletableFuture<ResponseEntity<Object>> cancel(@PathVariable("backfillId") final String backfillId)
    {
        return call(s -> s.cancel(backfillId), HttpStatus.OK);
    }

    /** A start that reset some partitions but not all: the error body plus what was registered. */
    @JsonPropertyOrder({"error", "message", "backfillId", "failures", "ranges", "tasks", "unavailablePartitions"})
    public record PartialStartBody(
        String error, String message, String backfillId, List<String> failures, List<BackfillView.Range> ranges,
        List<BackfillView.Task> tasks, List<Integer> unavailablePartitions)
    {
    }

    private <T> CompletableFuture<ResponseEntity<Object>> call(
        final Function<BackfillService, CompletableFuture<T>> operation, final HttpStatus success)
    {
        final BackfillService backfills = service.getIfAvailable();
        if (backfills == null)
        {
            return CompletableFuture.completedFuture(error(new ManagementException(HttpStatus.SERVICE_UNAVAILABLE,
                "backfills are not available on this gateway")));
        }
        CompletableFuture<T> result;
        try
        {
            result = operation.apply(backfills);
        }
        catch (final RuntimeException e)
        {
            result = CompletableFuture.failedFuture(e);
        }
        return result.handle((value, failure) ->
        {
            if (failure == null)
            {
                return ResponseEntity.status(success).contentType(MediaType.APPLICATION_JSON).body((Object)value);
            }
            final Throwable cause = Futures.unwrapAll(failure);
            if (cause instanceof ManagementException e)
            {
                return error(e);
            }
            if (cause instanceof BackfillStartException e)
            {
                final BackfillView view = e.registered();
                return ResponseEntity.status(e.status()).contentType(MediaType.APPLICATION_JSON).body((Object)
                    new PartialStartBody(ManagementErrorBody.of(e.status(), e.getMessage()).error(), e.getMessage(),
                        view.backfillId(), e.failures(), view.ranges(), view.tasks(), view.unavailablePartitions()));
            }
            if (cause instanceof RuntimeException e)
            {
                throw e; // ManagementErrorHandler answers 500 with the message
            }
            throw new IllegalStateException(cause);
        });
    }

    private static ResponseEntity<Object> error(final ManagementException e)
    {
        final ResponseEntity<ManagementErrorBody> answer = ManagementErrorHandler.answer(e.status(), e.getMessage());
        return ResponseEntity.status(answer.getStatusCode()).contentType(MediaType.APPLICATION_JSON)
            .body((Object)answer.getBody());
    }

    private static boolean parseDryRun(final String dryRun)
    {
        if (dryRun == null || dryRun.equalsIgnoreCase("false"))
        {
            return false;
        }
        if (dryRun.isEmpty() || dryRun.equalsIgnoreCase("true"))
        {
            return true;
        }
        throw new ManagementException(HttpStatus.BAD_REQUEST, "dryRun must be true or false, was '" + dryRun + "'");
    }
}
