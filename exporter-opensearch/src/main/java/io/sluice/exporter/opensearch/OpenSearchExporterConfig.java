package io.sluice.exporter.opensearch;

import io.sluice.exporter.spi.ExporterConfigException;
import io.sluice.exporter.spi.ExporterSettings;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The settings of an exporter of type {@code opensearch} (CONTRACT §4), read through {@link ExporterSettings} (any
 * spelling of a name, so environment variables work; {@code 5MB}, {@code 250ms}) and checked. A setting that cannot
 * work is refused with an {@link ExporterConfigException} naming it. {@code retry.max-backoff} is the broker's and
 * never reaches this class.
 */
public record OpenSearchExporterConfig(
    List<URI> urls,
    String index,
    String username,
    String password,
    int bulkMaxRecords,
    long bulkMaxBytes,
    Duration bulkMaxDelay,
    OnRejected onRejected,
    String snapshotRepository)
{
    public static final String URL = "url";
    public static final String INDEX = "index";
    public static final String USERNAME = "username";
    public static final String PASSWORD = "password";
    public static final String BULK_MAX_RECORDS = "bulk.max-records";
    public static final String BULK_MAX_BYTES = "bulk.max-bytes";
    public static final String BULK_MAX_DELAY = "bulk.max-delay";
    public static final String ON_REJECTED = "on-rejected";
    /** The snapshot repository (registered by the operator) backups snapshot the index into; unset: none (issue 26). */
    public static final String SNAPSHOT_REPOSITORY = "snapshot.repository";

    private static final Set<String> KNOWN = Set.of(URL, INDEX, USERNAME, PASSWORD, BULK_MAX_RECORDS, BULK_MAX_BYTES,
        BULK_MAX_DELAY, ON_REJECTED, SNAPSHOT_REPOSITORY);

    /** What to do with a document the sink rejects for good (a 4xx for that item). */
    public enum OnRejected
    {
        RETRY, DEAD_LETTER
    }

    /** Reads {@code given} (names as given, under {@code sluice.exporters.<id>.}) for an exporter without an id. */
    public static OpenSearchExporterConfig parse(final Map<String, String> given)
    {
        return from(new ExporterSettings(null, given));
    }

    /**
     * Reads and checks an exporter's settings; touches no network.
     *
     * @throws ExporterConfigException naming the setting that cannot work.
     */
    public static OpenSearchExporterConfig from(final ExporterSettings settings)
    {
        settings.requireOnly(KNOWN, Set.of(), "an opensearch exporter");
        final List<URI> urls = urls(settings, settings.text(URL, "http://127.0.0.1:9200"));
        final String index = settings.text(INDEX, "sluice-records");
        if (!index.equals(index.toLowerCase(Locale.ROOT)) || index.startsWith("_") ||
            index.startsWith("-") || index.chars().anyMatch(c -> " \"*\\<|,>/?#:".indexOf(c) >= 0))
        {
            throw settings.invalid(INDEX, "'" + index + "' is not a valid index name " +
                "(lower case, no spaces or any of \"*\\<|,>/?#:, not starting with _ or -)");
        }
        final String username = settings.text(USERNAME);
        final String password = settings.text(PASSWORD);
        if ((username == null) != (password == null))
        {
            throw settings.invalid(username == null ? USERNAME : PASSWORD,
                "required when " + (username == null ? PASSWORD : USERNAME) + " is set");
        }
        final long maxRecords = settings.number(BULK_MAX_RECORDS, 1000, 1, 100_000);
        final long maxBytes = settings.size(BULK_MAX_BYTES, 5L * 1024 * 1024);
        if (maxBytes > 100L * 1024 * 1024)
        {
            throw settings.invalid(BULK_MAX_BYTES, "over 100MB, the sink's default request limit");
        }
        final Duration maxDelay = settings.duration(BULK_MAX_DELAY, Duration.ofSeconds(1));
        final OnRejected onRejected = "dead-letter".equals(settings.choice(ON_REJECTED, "retry", "retry", "dead-letter")) ?
            OnRejected.DEAD_LETTER : OnRejected.RETRY;
        final String repository = settings.text(SNAPSHOT_REPOSITORY);
        if (repository != null && (repository.isBlank() || repository.chars().anyMatch(c -> " \"*\\<|,>/?#".indexOf(c) >= 0)))
        {
            throw settings.invalid(SNAPSHOT_REPOSITORY, "'" + repository + "' is not a repository name");
        }
        return new OpenSearchExporterConfig(urls, index, username, password, (int)maxRecords, maxBytes, maxDelay,
            onRejected, repository);
    }

    private static List<URI> urls(final ExporterSettings settings, final String value)
    {
        final List<URI> urls = new ArrayList<>();
        for (final String part : value.split(","))
        {
            final String trimmed = part.trim();
            if (trimmed.isEmpty())
            {
                continue;
            }
            final URI uri;
            try
            {
                uri = new URI(trimmed);
            }
            catch (final java.net.URISyntaxException e)
            {
                throw settings.invalid(URL, "'" + trimmed + "' is not a URL (" + e.getReason() + ")");
            }
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null)
            {
                throw settings.invalid(URL, "'" + trimmed + "' is not an http:// or https:// URL with a host");
            }
            urls.add(uri);
        }
        if (urls.isEmpty())
        {
            throw settings.invalid(URL, "no URL given");
        }
        return List.copyOf(urls);
    }

    @Override
    public String toString()
    {
        return "OpenSearchExporterConfig[urls=" + urls + ", index=" + index + ", username=" + username +
            ", password=" + (password == null ? null : "***") + ", bulkMaxRecords=" + bulkMaxRecords +
            ", bulkMaxBytes=" + bulkMaxBytes + ", bulkMaxDelay=" + bulkMaxDelay + ", onRejected=" + onRejected + ", snapshotRepository=" + snapshotRepository + "]";
    }
}
