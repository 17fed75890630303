package io.sluice.gateway.apidocs;

import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The OpenAPI 3 description of both ports' APIs, written by hand (the management API is part actuator endpoints,
 * part controllers, on its own port: no generator sees all of it) and kept in the jar. {@code docs/openapi.json}
 * is the same file in the repository, held equal by {@code ApiDocsHttpTest}. Immutable.
 */
public final class ApiDescription
{
    static final String RESOURCE = "openapi.json";

    private static final String DOCUMENT = read();

    private ApiDescription()
    {
    }

    public static String document()
    {
        return DOCUMENT;
    }

    static ResponseEntity<String> answer()
    {
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).cacheControl(CacheControl.noCache()).body(DOCUMENT);
    }

    private static String read()
    {
        try (InputStream in = ApiDescription.class.getResourceAsStream(RESOURCE))
        {
            if (in == null)
            {
                throw new IllegalStateException("the API description " + RESOURCE + " is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException("cannot read the API description", e);
        }
    }
}
