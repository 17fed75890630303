package io.sluice.gateway.records;

import tools.jackson.databind.JsonNode;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Refuses text that is not exactly UTF-8, instead of letting a parser rewrite it: overlong forms ({@code C0 AF}
 * for {@code /}), encoded surrogates and truncated sequences in the bytes (the JDK's strict decoder), and lone
 * surrogates written as JSON escapes ({@code "\\ud800"}), which would otherwise be stored as {@code ?}.
 */
final class Utf8
{
    private static final ThreadLocal<CharBuffer> SCRATCH = ThreadLocal.withInitial(() -> CharBuffer.allocate(8192));

    private Utf8()
    {
    }

    static void requireValid(final byte[] body)
    {
        final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
        final ByteBuffer in = ByteBuffer.wrap(body);
        final CharBuffer out = SCRATCH.get();
        while (true)
        {
            out.clear();
            final CoderResult result = decoder.decode(in, out, true);
            if (result.isError())
            {
                throw invalid(in.position(), result);
            }
            if (result.isUnderflow())
            {
                out.clear();
                final CoderResult flushed = decoder.flush(out);
                if (flushed.isError())
                {
                    throw invalid(in.position(), flushed);
                }
                return;
            }
        }
    }

    private static InvalidRecordException invalid(final int offset, final CoderResult result)
    {
        String detail;
        try
        {
            result.throwException();
            detail = result.toString();
        }
        catch (final CharacterCodingException e)
        {
            detail = result.length() + " malformed byte(s)";
        }
        return new InvalidRecordException("invalid_utf8", "the request body is not valid UTF-8 at byte " + offset +
            " (" + detail + "); overlong forms and encoded surrogates are refused, not rewritten");
    }

    /** Whether the body has a {@code \\uD...} escape at all: only then can a parsed string hold a lone surrogate. */
    static boolean mayEscapeSurrogates(final byte[] body)
    {
        for (int i = 0; i + 2 < body.length; i++)
        {
            if (body[i] == '\\' && body[i + 1] == 'u' && (body[i + 2] == 'd' || body[i + 2] == 'D'))
            {
                return true;
            }
        }
        return false;
    }

    static void requireNoLoneSurrogates(final JsonNode node, final String where)
    {
        if (node.isString())
        {
            requireNoLoneSurrogates(node.asString(), where);
        }
        else if (node.isObject())
        {
            for (final Map.Entry<String, JsonNode> field : node.properties())
            {
                requireNoLoneSurrogates(field.getKey(), where);
                requireNoLoneSurrogates(field.getValue(), where);
            }
        }
        else if (node.isArray())
        {
            for (final JsonNode element : node.values())
            {
                requireNoLoneSurrogates(element, where);
            }
        }
    }

    private static void requireNoLoneSurrogates(final String text, final String where)
    {
        for (int i = 0; i < text.length(); i++)
        {
            final char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1)))
            {
                i++;
            }
            else if (Character.isSurrogate(c))
            {
                throw new InvalidRecordException("invalid_utf8", where + " has a lone surrogate \\u" +
                    Integer.toHexString(c) + " in a string; it cannot be stored as UTF-8 and is refused, not rewritten");
            }
        }
    }
}
