package io.sluice.cli;

import picocli.CommandLine;

import java.time.Duration;
import java.time.format.DateTimeParseException;

/** Reads {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h} or ISO-8601 ({@code PT30S}); must be positive. */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration>
{
    @Override
    public Duration convert(final String value)
    {
        final Duration duration = parse(value);
        if (duration.isNegative() || duration.isZero())
        {
            throw new CommandLine.TypeConversionException("'" + value + "' must be a positive duration");
        }
        return duration;
    }

    public static Duration parse(final String value)
    {
        final String text = value.strip().toLowerCase();
        try
        {
            if (text.startsWith("pt") || text.startsWith("p"))
            {
                return Duration.parse(text.toUpperCase());
            }
            if (text.endsWith("ms"))
            {
                return Duration.ofMillis(Long.parseLong(text.substring(0, text.length() - 2)));
            }
            final long amount = Long.parseLong(text.substring(0, text.length() - 1));
            switch (text.charAt(text.length() - 1))
            {
                case 's':
                    return Duration.ofSeconds(amount);
                case 'm':
                    return Duration.ofMinutes(amount);
                case 'h':
                    return Duration.ofHours(amount);
                default:
                    break;
            }
        }
        catch (final NumberFormatException | DateTimeParseException | StringIndexOutOfBoundsException ex)
        {
            // fall through to the one error message below
        }
        throw new CommandLine.TypeConversionException(
            "'" + value + "' is not a duration (use e.g. 500ms, 30s, 2m)");
    }
}
