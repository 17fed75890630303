package io.sluice.broker.command;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.json.JsonFactory;

/**
 * Checks that a record's payload is exactly one JSON value, as the gateway makes it: the broker stores and
 * exports only what the gateway would have let through, whoever sent the request. Thread-safe.
 */
final class JsonPayloads
{
    private static final JsonFactory JSON = new JsonFactory();

    private JsonPayloads()
    {
    }

    /** Why {@code length} bytes at {@code offset} are not one JSON value, or null when they are. */
    static String problem(final byte[] bytes, final int offset, final int length)
    {
        if (length == 0)
        {
            return "the payload is empty";
        }
        try (JsonParser parser = JSON.createParser(bytes, offset, length))
        {
            final JsonToken first = parser.nextToken();
            if (first == null)
            {
                return "the payload holds no JSON value";
            }
            parser.skipChildren();
            if (parser.nextToken() != null)
            {
                return "the payload holds more than one JSON value (at byte " +
                    parser.currentTokenLocation().getByteOffset() + ")";
            }
            return null;
        }
        catch (final JacksonException e)
        {
            return "the payload is not valid JSON: " + e.getOriginalMessage() + " (at byte " +
                (e.getLocation() == null ? -1 : e.getLocation().getByteOffset()) + ")";
        }
    }
}
