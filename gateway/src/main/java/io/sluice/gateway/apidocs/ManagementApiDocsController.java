package io.sluice.gateway.apidocs;

import io.sluice.gateway.management.ManagementController;
import org.springframework.boot.actuate.autoconfigure.web.server.ConditionalOnManagementPort;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;

/**
 * {@code GET /v3/api-docs} on the management port: the same document as on the client port. Two controllers because
 * each port's dispatcher sees only its own context's handlers; on a shared port the client one answers alone.
 */
@ManagementController
@ConditionalOnManagementPort(ManagementPortType.DIFFERENT)
public class ManagementApiDocsController
{
    @GetMapping(path = "/v3/api-docs", produces = MediaType.APPLICATION_JSON_VALUE)
    public ResponseEntity<String> apiDocs()
    {
        return ApiDescription.answer();
    }
}
