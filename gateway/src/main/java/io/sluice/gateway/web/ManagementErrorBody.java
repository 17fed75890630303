package io.sluice.gateway.web;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.HttpStatus;

/** Every error answer of the management API: {@code {"error": "<reason>", "message": "<what failed, with values>"}}. */
@JsonPropertyOrder({ "error", "message" })
public record ManagementErrorBody(String error, String message)
{
    public static ManagementErrorBody of(final HttpStatusCode status, final String message)
    {
        final HttpStatus known = HttpStatus.resolve(status.value());
        return new ManagementErrorBody(known != null ? known.getReasonPhrase() : "Error " + status.value(), message);
    }

    /** The body as JSON, for writers outside Spring MVC (servlet filters). */
    public String toJson()
    {
        return "{\"error\":" + quote(error) + ",\"message\":" + quote(message) + "}";
    }

    private static String quote(final String value)
    {
        if (value == null)
        {
            return "null";
        }
        final StringBuilder quoted = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++)
        {
            final char c = value.charAt(i);
            switch (c)
            {
                case '"' -> quoted.append("\\\"");
                case '\\' -> quoted.append("\\\\");
                case '\n' -> quoted.append("\\n");
                case '\r' -> quoted.append("\\r");
                case '\t' -> quoted.append("\\t");
                default ->
                {
                    if (c < 0x20)
                    {
                        quoted.append(String.format("\\u%04x", (int)c));
                    }
                    else
                    {
                        quoted.append(c);
                    }
                }
            }
        }
        return quoted.append('"').toString();
    }
}
