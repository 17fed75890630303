package io.sluice.gateway.json;

import tools.jackson.core.JacksonException;
import tools.jackson.core.TokenStreamLocation;

/**
 * Turns a Jackson parse failure into the one line a caller of the HTTP API sees: what is wrong and where
 * ("Unexpected end-of-input: expected close marker for Array (line 1, column 14)"), without the parser's
 * internal location dump ("[Source: REDACTED ...; byte offset: #UNKNOWN]").
 */
public final class JsonSyntaxError
{
    private JsonSyntaxError()
    {
    }

    public static String describe(final Throwable failure)
    {
        if (!(failure instanceof JacksonException jackson))
        {
            return String.valueOf(failure.getMessage());
        }
        final String message = withoutSourceDump(jackson.getOriginalMessage());
        final TokenStreamLocation location = jackson.getLocation();
        if (location == null || location.getLineNr() < 1)
        {
            return message;
        }
        return message + " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
    }

    /** Drops a trailing "(start marker at [Source: ...])" or "at [Source: ...]" that names no useful place. */
    private static String withoutSourceDump(final String message)
    {
        if (message == null)
        {
            return "not valid JSON";
        }
        final int source = message.indexOf("[Source:");
        if (source < 0)
        {
            return message.strip();
        }
        String head = message.substring(0, source).strip();
        if (head.endsWith("(start marker at"))
        {
            head = head.substring(0, head.length() - "(start marker at".length()).strip();
        }
        else if (head.endsWith(" at"))
        {
            head = head.substring(0, head.length() - " at".length()).strip();
        }
        return head;
    }
}
