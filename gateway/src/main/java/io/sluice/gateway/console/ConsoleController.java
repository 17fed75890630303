package io.sluice.gateway.console;

import io.sluice.gateway.management.ManagementController;
import io.sluice.gateway.management.ManagementErrorHandler;
import org.springframework.core.env.Environment;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The operations console at {@code /console} on the management server: one page, one script and one style sheet,
 * read from the jar once and served as they are (the page gets the actuator's base path filled in). The console
 * is a client of the same management API scripts use; it holds no state of its own and mutates nothing here.
 * Reads need no token, so the page loads without one; every action it sends goes through the token filter.
 * The Content-Security-Policy keeps the page to its own origin: nothing is fetched from elsewhere, and it works
 * offline. Thread-safe (immutable after construction).
 */
@ManagementController
public class ConsoleController
{
    static final String BASE_PATH_PLACEHOLDER = "{{managementBasePath}}";

    private static final String CONTENT_SECURITY_POLICY =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
        "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

    private final String page;
    private final Map<String, Asset> assets;

    public ConsoleController(final Environment environment)
    {
        final String basePath = trimTrailingSlash(environment.getProperty("management.endpoints.web.base-path", "/actuator"));
        this.page = read("index.html").replace(BASE_PATH_PLACEHOLDER, htmlAttribute(basePath));
        this.assets = Map.of(
            "console.js", new Asset(read("console.js"), "text/javascript;charset=UTF-8"),
            "console.css", new Asset(read("console.css"), "text/css;charset=UTF-8"));
    }

    private record Asset(String text, String contentType)
    {
    }

    @GetMapping(path = { "/console", "/console/" })
    public ResponseEntity<String> page()
    {
        return answer(page, MediaType.TEXT_HTML_VALUE + ";charset=UTF-8");
    }

    @GetMapping(path = "/console/{asset:[a-z]+\\.(?:js|css)}")
    public ResponseEntity<?> asset(@PathVariable("asset") final String name)
    {
        final Asset asset = assets.get(name);
        if (asset == null)
        {
            return ManagementErrorHandler.answer(HttpStatus.NOT_FOUND, "the console has no file '" + name + "'");
        }
        return answer(asset.text(), asset.contentType());
    }

    private static ResponseEntity<String> answer(final String body, final String contentType)
    {
        // no-cache: a gateway upgrade serves its own console at once; revalidation on loopback costs nothing.
        return ResponseEntity.ok()
            .header(HttpHeaders.CONTENT_TYPE, contentType)
            .cacheControl(CacheControl.noCache())
            .header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
            .header("X-Content-Type-Options", "nosniff")
            .header("Referrer-Policy", "no-referrer")
            .body(body);
    }

    private static String read(final String name)
    {
        try (InputStream in = ConsoleController.class.getResourceAsStream(name))
        {
            if (in == null)
            {
                throw new IllegalStateException("console asset " + name + " is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException("cannot read console asset " + name, e);
        }
    }

    private static String trimTrailingSlash(final String path)
    {
        return path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    }

    private static String htmlAttribute(final String value)
    {
        return value.replace("&", "&amp;").replace("\"", "&quot;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
