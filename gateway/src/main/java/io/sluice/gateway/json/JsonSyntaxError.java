package io.sluice.gateway.json;

import tools.jackson.core.JacksonException;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.databind.exc.MismatchedInputException;

import java.util.Collection;
import java.util.List;

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
        if (jackson instanceof MismatchedInputException mismatch && mismatch.getTargetType() != null
            && !jackson.getPath().isEmpty())
        {
            // A value of the wrong kind: name the field and the kind it takes, not the Java type nor the reference
            // chain through the gateway's classes that Jackson's message holds.
            return "field '" + path(jackson.getPath()) + "' must be " + kind(mismatch.getTargetType());
        }
        final String message = withoutSourceDump(jackson.getOriginalMessage());
        final TokenStreamLocation location = jackson.getLocation();
        if (location == null || location.getLineNr() < 1)
        {
            return message;
        }
        return message + " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
    }

    /** {@code targets[0].brokerId}: the JSON path of a reference chain. */
    private static String path(final List<JacksonException.Reference> references)
    {
        final StringBuilder path = new StringBuilder();
        for (final JacksonException.Reference reference : references)
        {
            if (reference.getPropertyName() != null)
            {
                path.append(path.isEmpty() ? "" : ".").append(reference.getPropertyName());
            }
            else if (reference.getIndex() >= 0)
            {
                path.append('[').append(reference.getIndex()).append(']');
            }
        }
        return path.toString();
    }

    private static String kind(final Class<?> type)
    {
        if (type == int.class || type == long.class || type == short.class || type == Integer.class
            || type == Long.class || type == Short.class)
        {
            return "a whole number";
        }
        if (type == boolean.class || type == Boolean.class)
        {
            return "true or false";
        }
        if (Number.class.isAssignableFrom(type) || type == double.class || type == float.class)
        {
            return "a number";
        }
        if (type == String.class || type.isEnum())
        {
            return "a string";
        }
        if (type.isArray() || Collection.class.isAssignableFrom(type))
        {
            return "an array";
        }
        return "an object";
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
