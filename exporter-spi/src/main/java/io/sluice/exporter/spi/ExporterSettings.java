package io.sluice.exporter.spi;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * An exporter's settings ({@code sluice.exporters.<id>.*}) read the way Spring reads every other Sluice setting, so an
 * exporter takes environment variables as well as {@code --name=value}:
 * <ul>
 *   <li><b>relaxed names</b>: a setting is found under any spelling of its name that differs only in case, dashes,
 *       underscores and dots, as environment variables produce them. {@code bootstrap-servers},
 *       {@code bootstrapServers}, {@code bootstrapservers} and {@code BOOTSTRAP_SERVERS} (or
 *       {@code bootstrap.servers}, what {@code SLUICE_EXPORTERS_BUS_BOOTSTRAP_SERVERS} binds to) are one setting;</li>
 *   <li><b>durations</b>: {@code 500ms}, {@code 5s}, {@code 2m}, {@code 1h}, {@code 1d} or ISO-8601 {@code PT5S}; a
 *       bare number is milliseconds;</li>
 *   <li><b>sizes</b>: {@code 512B}, {@code 64KB}, {@code 10MB}, {@code 1GB} (powers of 1024, as Spring's
 *       {@code DataSize}); a bare number is bytes.</li>
 * </ul>
 * A blank value counts as not set. Every refusal is an {@link ExporterConfigException} naming the full setting, in the
 * spelling it was given in. Immutable and thread-safe.
 */
public final class ExporterSettings
{
    private final String exporterId;
    /** Prepended to names in messages: {@code producer.} for a {@link #group}. */
    private final String namePrefix;
    /** The given settings by their given name, in name order. */
    private final Map<String, String> given;

    /**
     * @param exporterId the exporter's id, to name {@code sluice.exporters.<id>.<name>} in messages.
     * @param properties the settings by name under {@code sluice.exporters.<id>.}, in any spelling.
     */
    public ExporterSettings(final String exporterId, final Map<String, String> properties)
    {
        this(exporterId, "", properties);
    }

    private ExporterSettings(final String exporterId, final String namePrefix, final Map<String, String> properties)
    {
        this.exporterId = exporterId;
        this.namePrefix = namePrefix;
        this.given = new TreeMap<>(properties == null ? Map.of() : properties);
    }

    /**
     * A name's canonical form: lower case letters and digits only. Two names are the same setting when their
     * canonical forms are equal ({@code retry.max-backoff}, {@code RETRY_MAXBACKOFF}, {@code retry.maxBackoff}).
     */
    public static String canonical(final String name)
    {
        final StringBuilder canonical = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++)
        {
            final char c = Character.toLowerCase(name.charAt(i));
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            {
                canonical.append(c);
            }
        }
        return canonical.toString();
    }

    /** Whether two names are the same setting. */
    public static boolean sameName(final String a, final String b)
    {
        return canonical(a).equals(canonical(b));
    }

    /** The given names, as given, in order. */
    public Set<String> names()
    {
        return java.util.Collections.unmodifiableSet(given.keySet());
    }

    /** The given settings by their given name. */
    public Map<String, String> asMap()
    {
        return java.util.Collections.unmodifiableMap(given);
    }

    /** Whether the setting is given (under any spelling, blank or not). */
    public boolean contains(final String name)
    {
        return givenName(name) != null;
    }

    /** The setting's value, trimmed; null when it is not given or blank. */
    public String text(final String name)
    {
        final String key = givenName(name);
        if (key == null)
        {
            return null;
        }
        final String value = given.get(key);
        return value == null || value.isBlank() ? null : value.trim();
    }

    /** The setting's value, trimmed, or {@code defaultValue} when not given or blank. */
    public String text(final String name, final String defaultValue)
    {
        final String value = text(name);
        return value == null ? defaultValue : value;
    }

    /** The setting's value; refused naming it when not given. {@code what} says what it should be. */
    public String required(final String name, final String what)
    {
        final String value = text(name);
        if (value == null)
        {
            throw invalid(name, "required (" + what + ")");
        }
        return value;
    }

    /** A duration ({@code 500ms}, {@code 5s}, {@code 2m}, {@code PT1M}; a bare number is milliseconds) over zero. */
    public Duration duration(final String name, final Duration defaultValue)
    {
        final String value = text(name);
        if (value == null)
        {
            return defaultValue;
        }
        final Duration parsed = parseDuration(value);
        if (parsed == null || parsed.isNegative() || parsed.isZero())
        {
            throw invalid(name, "'" + value + "' is not a positive duration (e.g. 500ms, 5s, 2m)");
        }
        return parsed;
    }

    /** A size in bytes ({@code 512B}, {@code 64KB}, {@code 10MB}, {@code 1GB}; a bare number is bytes) over zero. */
    public long size(final String name, final long defaultValue)
    {
        final String value = text(name);
        if (value == null)
        {
            return defaultValue;
        }
        final long parsed = parseSize(value);
        if (parsed < 1)
        {
            throw invalid(name, "'" + value + "' is not a positive size (e.g. 512KB, 10MB)");
        }
        return parsed;
    }

    /** A whole number from {@code min} to {@code max}. */
    public long number(final String name, final long defaultValue, final long min, final long max)
    {
        final String value = text(name);
        if (value == null)
        {
            return defaultValue;
        }
        final long parsed;
        try
        {
            parsed = Long.parseLong(value.replace("_", ""));
        }
        catch (final NumberFormatException e)
        {
            throw invalid(name, "'" + value + "' is not a whole number");
        }
        if (parsed < min || parsed > max)
        {
            throw invalid(name, parsed + " is not from " + min + " to " + max);
        }
        return parsed;
    }

    /** {@code true} or {@code false}, in any case. */
    public boolean flag(final String name, final boolean defaultValue)
    {
        final String value = text(name);
        if (value == null)
        {
            return defaultValue;
        }
        return switch (value.toLowerCase(Locale.ROOT))
        {
            case "true" -> true;
            case "false" -> false;
            default -> throw invalid(name, "'" + value + "' is neither true nor false");
        };
    }

    /**
     * One of {@code choices}, matched like names ({@code dead-letter}, {@code DEAD_LETTER} and {@code deadLetter} are
     * one choice); returned as spelled in {@code choices}.
     */
    public String choice(final String name, final String defaultValue, final String... choices)
    {
        final String value = text(name);
        if (value == null)
        {
            return defaultValue;
        }
        for (final String choice : choices)
        {
            if (sameName(choice, value))
            {
                return choice;
            }
        }
        throw invalid(name, "'" + value + "' is not one of " + String.join(", ", choices));
    }

    /**
     * The settings under {@code prefix.}: {@code group("producer")} of {@code producer.acks} and
     * {@code producer.linger.ms} holds {@code acks} and {@code linger.ms}, and names them {@code producer.acks} in
     * messages. The prefix is matched like a name, the rest of each name is kept as given.
     */
    public ExporterSettings group(final String prefix)
    {
        final Map<String, String> members = new LinkedHashMap<>();
        for (final Map.Entry<String, String> entry : given.entrySet())
        {
            final String rest = rest(entry.getKey(), prefix);
            if (rest != null)
            {
                members.put(rest, entry.getValue());
            }
        }
        return new ExporterSettings(exporterId, namePrefix + prefix + ".", members);
    }

    /**
     * Refuses the first setting (in name order) that is none of {@code known} and in none of the {@code groups}
     * (prefixes as for {@link #group}), naming it as given and listing what {@code kind} knows: a typo never falls
     * back to a default.
     */
    public void requireOnly(final Collection<String> known, final Collection<String> groups, final String kind)
    {
        final Set<String> canonicalKnown = new java.util.HashSet<>();
        known.forEach(name -> canonicalKnown.add(canonical(name)));
        for (final String name : given.keySet())
        {
            if (canonicalKnown.contains(canonical(name)))
            {
                continue;
            }
            boolean inGroup = false;
            for (final String group : groups)
            {
                inGroup |= rest(name, group) != null;
            }
            if (!inGroup)
            {
                final Set<String> listed = new TreeSet<>(known);
                groups.forEach(group -> listed.add(group + ".<name>"));
                throw invalid(name, "unknown setting of " + kind + " (known: " + String.join(", ", listed) + ")");
            }
        }
    }

    /** An {@link ExporterConfigException} naming the setting as given (or as {@code name} when not given). */
    public ExporterConfigException invalid(final String name, final String problem)
    {
        final String givenName = givenName(name);
        return new ExporterConfigException(exporterId, namePrefix + (givenName == null ? name : givenName), problem);
    }

    /**
     * The given name of a setting, or null; refuses two spellings of one setting with different values, which would
     * otherwise depend on the order Spring read them in.
     */
    private String givenName(final String name)
    {
        final String wanted = canonical(name);
        String found = null;
        for (final String key : given.keySet())
        {
            if (canonical(key).equals(wanted))
            {
                if (found != null && !java.util.Objects.equals(normalised(given.get(found)), normalised(given.get(key))))
                {
                    throw new ExporterConfigException(exporterId, namePrefix + key, "given twice with different " +
                        "values, also as " + namePrefix + found + " (spellings of one setting)");
                }
                found = found == null ? key : found;
            }
        }
        return found;
    }

    private static String normalised(final String value)
    {
        return value == null ? "" : value.trim();
    }

    /** What is left of {@code name} after the segments matching {@code prefix}, or null when it is not under it. */
    private static String rest(final String name, final String prefix)
    {
        final String wanted = canonical(prefix);
        final String[] segments = name.split("\\.");
        final StringBuilder head = new StringBuilder();
        for (int i = 0; i < segments.length - 1; i++)
        {
            head.append(segments[i]);
            final String canonicalHead = canonical(head.toString());
            if (canonicalHead.equals(wanted))
            {
                return String.join(".", java.util.Arrays.copyOfRange(segments, i + 1, segments.length));
            }
            if (!wanted.startsWith(canonicalHead))
            {
                return null;
            }
        }
        return null;
    }

    /** A duration as {@link #duration} reads it, or null when it is not one. */
    public static Duration parseDuration(final String text)
    {
        final String value = text.trim().toLowerCase(Locale.ROOT);
        if (value.startsWith("pt") || value.startsWith("p") && value.contains("d"))
        {
            try
            {
                return Duration.parse(value.toUpperCase(Locale.ROOT));
            }
            catch (final DateTimeParseException e)
            {
                return null;
            }
        }
        int split = 0;
        while (split < value.length() && (Character.isDigit(value.charAt(split)) || value.charAt(split) == '-'))
        {
            split++;
        }
        final long amount;
        try
        {
            amount = Long.parseLong(value.substring(0, split));
        }
        catch (final NumberFormatException e)
        {
            return null;
        }
        try
        {
            return switch (value.substring(split).trim())
            {
                case "", "ms" -> Duration.ofMillis(amount);
                case "ns" -> Duration.ofNanos(amount);
                case "us" -> Duration.ofNanos(Math.multiplyExact(amount, 1000L));
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                case "d" -> Duration.ofDays(amount);
                default -> null;
            };
        }
        catch (final ArithmeticException e)
        {
            return null;
        }
    }

    /** A size in bytes as {@link #size} reads it, or -1 when it is not one. */
    public static long parseSize(final String text)
    {
        final String value = text.trim().toUpperCase(Locale.ROOT);
        int split = 0;
        while (split < value.length() && Character.isDigit(value.charAt(split)))
        {
            split++;
        }
        if (split == 0)
        {
            return -1;
        }
        final long factor = switch (value.substring(split).trim())
        {
            case "", "B" -> 1L;
            case "KB" -> 1L << 10;
            case "MB" -> 1L << 20;
            case "GB" -> 1L << 30;
            case "TB" -> 1L << 40;
            default -> -1L;
        };
        if (factor < 0)
        {
            return -1;
        }
        try
        {
            return Math.multiplyExact(Long.parseLong(value.substring(0, split)), factor);
        }
        catch (final ArithmeticException | NumberFormatException e)
        {
            return -1;
        }
    }

    /**
     * These settings without the ones whose names match any of {@code names} or lie in any of {@code groups}: what
     * the broker takes for itself before an exporter sees its settings.
     */
    public Map<String, String> without(final Collection<String> names, final Collection<String> groups)
    {
        final List<String> canonicalNames = new ArrayList<>();
        names.forEach(name -> canonicalNames.add(canonical(name)));
        final Map<String, String> kept = new TreeMap<>();
        for (final Map.Entry<String, String> entry : given.entrySet())
        {
            boolean taken = canonicalNames.contains(canonical(entry.getKey()));
            for (final String group : groups)
            {
                taken |= rest(entry.getKey(), group) != null;
            }
            if (!taken)
            {
                kept.put(entry.getKey(), entry.getValue());
            }
        }
        return kept;
    }

    @Override
    public String toString()
    {
        return "ExporterSettings[" + exporterId + ": " + given.keySet() + "]";
    }
}
