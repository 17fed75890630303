package io.sluice.qa.cluster;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/** The one JSON mapper of the harness. */
public final class Json
{
    public static final ObjectMapper MAPPER = JsonMapper.builder().build();

    private Json()
    {
    }

    public static JsonNode parse(final String text)
    {
        try
        {
            return MAPPER.readTree(text);
        }
        catch (final JacksonException ex)
        {
            throw new IllegalStateException("not JSON: " + abbreviate(text), ex);
        }
    }

    public static String write(final Object value)
    {
        return MAPPER.writeValueAsString(value);
    }

    static String abbreviate(final String text)
    {
        return text.length() <= 2_000 ? text : text.substring(0, 2_000) + "...(" + text.length() + " chars)";
    }
}
