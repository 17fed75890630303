package io.sluice.exporter.opensearch;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The properties of an exporter of type {@code opensearch} (CONTRACT §4), parsed and checked.
 * {@link #parse} throws {@link IllegalArgumentException} whose message starts with the property name
 * ({@code "bulk.max-records: ..."}), so the broker can name the full setting in its one-line startup error.
 */
public record OpenSearchExporterConfig(
    List<URI> urls,
    String index,
    String username,
    String password,
    int bulkMaxRecords,
    long bulkMaxBytes,
    Duration bulkMaxDelay,
    OnRejected onRejected)
{
    public static final String URL = "url";
    public static final String INDEX = "index";
    public static final String USERNAME = "username";
    public static final String PASSWORD = "password";
    public static final String BULK_MAX_RECORDS = "bulk.max-records";
    public static final String BULK_MAX_BYTES = "bulk.max-bytes";
    public static final String BULK_MAX_DELAY = "bulk.max-delay";
    /** Read by the broker's director for every exporter; accepted here so it is not refused as unknown. */
    public static final String RETRY_MAX_BACKOFF = "retry.max-backoff";
    public static final String ON_REJECTED = "on-rejected";

    private static final Set<String> KNOWN = Set.of(URL, INDEX, USERNAME, PASSWORD, BULK_MAX_RECORDS, BULK_MAX_BYTES,
        BULK_MAX_DELAY, RETRY_MAX_BACKOFF, ON_REJECTED);

    /** What to do with a document the sink rejects for good (a 4xx for that item). */
    public enum OnRejected
    {
        RETRY, DEAD_LETTER
    }

    public static OpenSearchExporterConfig parse(final Map<String, String> given)
    {
        final Map<String, String> properties = new java.util.HashMap<>();
        for (final Map.Entry<String, String> property : given.entrySet())
        {
            final String name = canonical(property.getKey());
            if (!KNOWN.contains(name))
            {
                throw new IllegalArgumentException(property.getKey() + ": unknown property of an opensearch exporter " +
                    "(known: " + new java.util.TreeSet<>(KNOWN) + ")");
            }
            properties.put(name, property.getValue());
        }
        final List<URI> urls = urls(properties.getOrDefault(URL, "http://127.0.0.1:9200"));
        final String index = properties.getOrDefault(INDEX, "sluice-records").trim();
        if (index.isEmpty() || !index.equals(index.toLowerCase(Locale.ROOT)) || index.startsWith("_") ||
            index.startsWith("-") || index.chars().anyMatch(c -> " \"*\\<|,>/?#:".indexOf(c) >= 0))
        {
            throw new IllegalArgumentException(INDEX + ": '" + index + "' is not a valid index name " +
                "(lower case, no spaces or any of \"*\\<|,>/?#:, not starting with _ or -)");
        }
        final String username = blankToNull(properties.get(USERNAME));
        final String password = blankToNull(properties.get(PASSWORD));
        if ((username == null) != (password == null))
        {
            throw new IllegalArgumentException((username == null ? USERNAME : PASSWORD) +
                ": required when " + (username == null ? PASSWORD : USERNAME) + " is set");
        }
        final long maxRecords = positive(BULK_MAX_RECORDS, properties.getOrDefault(BULK_MAX_RECORDS, "1000"));
        if (maxRecords > 100_000)
        {
            throw new IllegalArgumentException(BULK_MAX_RECORDS + ": " + maxRecords + " is over 100000");
        }
        final long maxBytes = bytes(BULK_MAX_BYTES, properties.getOrDefault(BULK_MAX_BYTES, "5MB"));
        if (maxBytes > 100L * 1024 * 1024)
        {
            throw new IllegalArgumentException(BULK_MAX_BYTES + ": over 100MB, the sink's default request limit");
        }
        final Duration maxDelay = duration(BULK_MAX_DELAY, properties.getOrDefault(BULK_MAX_DELAY, "1s"));
        duration(RETRY_MAX_BACKOFF, properties.getOrDefault(RETRY_MAX_BACKOFF, "30s"));
        final OnRejected onRejected = switch (properties.getOrDefault(ON_REJECTED, "retry").trim())
        {
            case "retry" -> OnRejected.RETRY;
            case "dead-letter" -> OnRejected.DEAD_LETTER;
            default -> throw new IllegalArgumentException(ON_REJECTED + ": '" + properties.get(ON_REJECTED) +
                "' is neither 'retry' nor 'dead-letter'");
        };
        return new OpenSearchExporterConfig(urls, index, username, password, (int)maxRecords, maxBytes, maxDelay,
            onRejected);
    }

    /**
     * The property's contract name: environment variables cannot carry dashes, so Spring binds
     * {@code SLUICE_EXPORTERS_SEARCH_BULK_MAXRECORDS} to {@code bulk.maxrecords}; both spellings mean
     * {@code bulk.max-records}.
     */
    public static String canonical(final String name)
    {
        final String plain = name.replace("-", "").toLowerCase(Locale.ROOT);
        for (final String known : KNOWN)
        {
            if (known.replace("-", "").equals(plain))
            {
                return known;
            }
        }
        return name;
    }

    private static List<URI> urls(final String value)
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
                throw new IllegalArgumentException(URL + ": '" + trimmed + "' is not a URL (" + e.getReason() + ")");
            }
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null)
            {
                throw new IllegalArgumentException(URL + ": '" + trimmed + "' is not an http:// or https:// URL with a host");
            }
            urls.add(uri);
        }
        if (urls.isEmpty())
        {
            throw new IllegalArgumentException(URL + ": no URL given");
        }
        return List.copyOf(urls);
    }

    private static long positive(final String name, final String value)
    {
        try
        {
            final long parsed = Long.parseLong(value.trim());
            if (parsed < 1)
            {
                throw new IllegalArgumentException(name + ": " + parsed + " is not at least 1");
            }
            return parsed;
        }
        catch (final NumberFormatException e)
        {
            throw new IllegalArgumentException(name + ": '" + value + "' is not a whole number");
        }
    }

    /** A size such as {@code 5MB}, {@code 512KB} or {@code 1000} (bytes); units are powers of 1024. */
    static long bytes(final String name, final String value)
    {
        final String v = value.trim().toUpperCase(Locale.ROOT);
        final String[] units = {"GB", "MB", "KB", "B"};
        final long[] factors = {1L << 30, 1L << 20, 1L << 10, 1};
        for (int i = 0; i < units.length; i++)
        {
            if (v.endsWith(units[i]))
            {
                return Math.multiplyExact(positive(name, v.substring(0, v.length() - units[i].length()), value),
                    factors[i]);
            }
        }
        return positive(name, v, value);
    }

    private static long positive(final String name, final String number, final String original)
    {
        try
        {
            return positive(name, number);
        }
        catch (final IllegalArgumentException e)
        {
            throw new IllegalArgumentException(name + ": '" + original + "' is not a positive size (e.g. 5MB, 512KB)");
        }
    }

    /** A duration such as {@code 1s}, {@code 250ms}, {@code 2m} or {@code 1h}; a bare number is milliseconds. */
    public static Duration duration(final String name, final String value)
    {
        final String v = value.trim().toLowerCase(Locale.ROOT);
        try
        {
            final Duration parsed;
            if (v.endsWith("ms"))
            {
                parsed = Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            }
            else if (v.endsWith("s"))
            {
                parsed = Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
            }
            else if (v.endsWith("m"))
            {
                parsed = Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
            }
            else if (v.endsWith("h"))
            {
                parsed = Duration.ofHours(Long.parseLong(v.substring(0, v.length() - 1)));
            }
            else
            {
                parsed = Duration.ofMillis(Long.parseLong(v));
            }
            if (parsed.isNegative() || parsed.isZero())
            {
                throw new NumberFormatException();
            }
            return parsed;
        }
        catch (final NumberFormatException e)
        {
            throw new IllegalArgumentException(name + ": '" + value + "' is not a positive duration (e.g. 1s, 250ms, 2m)");
        }
    }

    private static String blankToNull(final String value)
    {
        return value == null || value.isBlank() ? null : value;
    }

    @Override
    public String toString()
    {
        return "OpenSearchExporterConfig[urls=" + urls + ", index=" + index + ", username=" + username +
            ", password=" + (password == null ? null : "***") + ", bulkMaxRecords=" + bulkMaxRecords +
            ", bulkMaxBytes=" + bulkMaxBytes + ", bulkMaxDelay=" + bulkMaxDelay + ", onRejected=" + onRejected + "]";
    }
}
