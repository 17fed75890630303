package io.sluice.protocol.message;

import io.sluice.protocol.codecs.MessageHeaderDecoder;
import org.agrona.DirectBuffer;

/**
 * Safe first look at bytes that claim to be a Sluice message, before any generated decoder touches them:
 * generated decoders trust the header and read out of bounds on garbage. Stateless and thread-safe.
 */
public final class SbeMessages
{
    /** Returned by {@link #templateIdOf} for bytes that are not a well-formed Sluice message header. */
    public static final int NOT_A_MESSAGE = -1;

    private static final int BLOCK_LENGTH_OFFSET = 0;
    private static final int TEMPLATE_ID_OFFSET = 2;
    private static final int SCHEMA_ID_OFFSET = 4;

    private SbeMessages()
    {
    }

    /**
     * The template id of the message in {@code buffer[offset, offset + length)}, or {@link #NOT_A_MESSAGE}
     * when the bytes are shorter than a header, the schema id is not Sluice's, or the header's block
     * length runs past the bytes. A non-negative answer means the fixed block can be read safely; var data
     * and groups must still be decoded under a catch (see {@link #describe}).
     */
    public static int templateIdOf(final DirectBuffer buffer, final int offset, final int length)
    {
        if (buffer == null || offset < 0 || length < MessageHeaderDecoder.ENCODED_LENGTH ||
            (long)offset + length > buffer.capacity())
        {
            return NOT_A_MESSAGE;
        }
        final int schemaId = buffer.getShort(offset + SCHEMA_ID_OFFSET, MessageHeaderDecoder.BYTE_ORDER) & 0xFFFF;
        if (schemaId != MessageHeaderDecoder.SCHEMA_ID)
        {
            return NOT_A_MESSAGE;
        }
        final int blockLength = buffer.getShort(offset + BLOCK_LENGTH_OFFSET, MessageHeaderDecoder.BYTE_ORDER) & 0xFFFF;
        if (blockLength > length - MessageHeaderDecoder.ENCODED_LENGTH)
        {
            return NOT_A_MESSAGE;
        }
        return buffer.getShort(offset + TEMPLATE_ID_OFFSET, MessageHeaderDecoder.BYTE_ORDER) & 0xFFFF;
    }

    /**
     * True when the message in {@code buffer[offset, offset + length)} has the expected template id and a
     * fixed block at least {@code minBlockLength} long (the block length of the version this code knows).
     */
    public static boolean isMessage(
        final DirectBuffer buffer, final int offset, final int length, final int templateId, final int minBlockLength)
    {
        return templateIdOf(buffer, offset, length) == templateId &&
            (buffer.getShort(offset + BLOCK_LENGTH_OFFSET, MessageHeaderDecoder.BYTE_ORDER) & 0xFFFF) >= minBlockLength;
    }

    /** One line naming what the bytes are, for logs and error messages: never throws. */
    public static String describe(final DirectBuffer buffer, final int offset, final int length)
    {
        final int templateId = templateIdOf(buffer, offset, length);
        return templateId == NOT_A_MESSAGE ?
            "not a Sluice message (" + length + " bytes)" :
            "message template " + templateId + " (" + length + " bytes)";
    }
}
