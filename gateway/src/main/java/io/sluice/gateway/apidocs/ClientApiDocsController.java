package io.sluice.gateway.apidocs;

import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /v3/api-docs} on the client port (server.port): the OpenAPI description of both ports. */
@RestController
public class ClientApiDocsController
{
    @GetMapping(path = "/v3/api-docs", produces = MediaType.APPLICATION_JSON_VALUE)
    public ResponseEntity<String> apiDocs()
    {
        return ApiDescription.answer();
    }
}
