package io.sluice.gateway.exporters;

import io.sluice.gateway.management.ManagementController;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;

import java.util.concurrent.CompletableFuture;

/** {@code GET /actuator/exporters} on the management server (CONTRACT §3 "Exporters view"). Thin. */
@ManagementController
@RequestMapping("${management.endpoints.web.base-path:/actuator}")
public class ExportersController
{
    private final ObjectProvider<ExportersService> service;

    public ExportersController(final ObjectProvider<ExportersService> service)
    {
        this.service = service;
    }

    @GetMapping(path = "/exporters", produces = MediaType.APPLICATION_JSON_VALUE)
    public CompletableFuture<ResponseEntity<Object>> exporters()
    {
        final ExportersService exporters = service.getIfAvailable();
        if (exporters == null)
        {
            return CompletableFuture.completedFuture(ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
                .contentType(MediaType.APPLICATION_JSON).body((Object)io.sluice.gateway.web.ManagementErrorBody
                    .of(HttpStatus.SERVICE_UNAVAILABLE, "the exporters view is not available on this gateway")));
        }
        return exporters.view().thenApply(view ->
            ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body((Object)view));
    }
}
