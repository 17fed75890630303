package io.sluice.gateway.broker;

import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import org.agrona.DirectBuffer;
import org.agrona.sbe.MessageDecoderFlyweight;

import java.nio.ByteOrder;

/**
 * The checks every decoder of a broker's answer makes before trusting it: schema, block length and template,
 * an ErrorResponse turned into a {@link BrokerErrorException}, and var-data lengths bounded by the frame.
 * {@link #decode} is the one frame around every answer's body; the header and error decoders it uses are per thread.
 */
public final class ResponseFrames
{
    private static final ThreadLocal<Frame> FRAMES = ThreadLocal.withInitial(Frame::new);

    private ResponseFrames()
    {
    }

    /**
     * Checks the answer's header, then reads its body: an ErrorResponse becomes a {@link BrokerErrorException}, and
     * anything that does not decode cleanly (other schema or template, truncated, out of range) a
     * {@link MalformedResponseException} naming {@code what} and the {@code answer} — never a partial result.
     */
    public static <T> T decode(
        final DirectBuffer buffer, final int expectedTemplateId, final String what, final String answer, final Body<T> body)
    {
        final Frame frame = FRAMES.get();
        try
        {
            final int length = checkHeader(frame.header, frame.error, buffer, expectedTemplateId, what);
            return body.read(frame.header, length);
        }
        catch (final BrokerErrorException | MalformedResponseException e)
        {
            throw e;
        }
        catch (final RuntimeException e)
        {
            throw new MalformedResponseException(what + ": undecodable " + answer + ": " + e, e);
        }
    }

    /**
     * As {@link #decode(DirectBuffer, int, String, String, Body)} for an answer of {@code decoder}'s template, whose
     * body is read through {@code decoder} wrapped over it at the answer's block length and version.
     */
    public static <D extends MessageDecoderFlyweight, T> T decode(
        final DirectBuffer buffer, final D decoder, final String what, final String answer, final DecoderBody<D, T> body)
    {
        return decode(buffer, decoder.sbeTemplateId(), what, answer, (header, length) ->
        {
            decoder.wrap(buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
            return body.read(decoder, length);
        });
    }

    /** Reads an answer's body once its header is checked; {@code length} is the frame's, for bounds checks. */
    @FunctionalInterface
    public interface Body<T>
    {
        T read(MessageHeaderDecoder header, int length);
    }

    /** Reads an answer's body through its decoder, wrapped over it; {@code length} is the frame's, for bounds checks. */
    @FunctionalInterface
    public interface DecoderBody<D, T>
    {
        T read(D decoder, int length);
    }

    /**
     * Wraps {@code header} over the answer and checks it is of the expected template; returns the answer's length.
     *
     * @throws BrokerErrorException      when the broker answered with an ErrorResponse.
     * @throws MalformedResponseException when the answer is not a complete message of this schema and template.
     */
    private static int checkHeader(
        final MessageHeaderDecoder header,
        final ErrorResponseDecoder error,
        final DirectBuffer buffer,
        final int expectedTemplateId,
        final String what)
    {
        final int length = buffer.capacity();
        if (length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            throw new MalformedResponseException(what + ": answer of " + length + " bytes is shorter than a header");
        }
        header.wrap(buffer, 0);
        if (header.schemaId() != MessageHeaderDecoder.SCHEMA_ID)
        {
            throw new MalformedResponseException(what + ": answer has schema " + header.schemaId() +
                ", expected " + MessageHeaderDecoder.SCHEMA_ID);
        }
        if (MessageHeaderDecoder.ENCODED_LENGTH + header.blockLength() > length)
        {
            throw new MalformedResponseException(what + ": answer block of " + header.blockLength() +
                " bytes exceeds the " + length + "-byte frame");
        }
        final int templateId = header.templateId();
        if (templateId == ErrorResponseDecoder.TEMPLATE_ID)
        {
            throw decodeError(header, error, buffer, length, what);
        }
        if (templateId != expectedTemplateId)
        {
            throw new MalformedResponseException(what + ": unexpected answer template " + templateId +
                ", expected " + expectedTemplateId);
        }
        return length;
    }

    /** Checks a var-data length before the codec allocates for it: garbage must not become a 2 GiB array. */
    public static void checkVarData(final DirectBuffer buffer, final int limit, final int length, final String what)
    {
        if (limit + Integer.BYTES > length ||
            limit + Integer.BYTES + (buffer.getInt(limit, ByteOrder.LITTLE_ENDIAN) & 0xFFFF_FFFFL) > length)
        {
            throw new MalformedResponseException(what + ": variable-length field runs past its " + length + "-byte frame");
        }
    }

    public static void checkLimit(final int limit, final int length, final String what)
    {
        if (limit > length)
        {
            throw new MalformedResponseException(what + ": answer runs past its " + length + "-byte frame");
        }
    }

    /** Checks an answer about one partition is about the one asked for. */
    public static void checkPartition(final int answeredPartitionId, final int partitionId, final String what)
    {
        if (answeredPartitionId != partitionId)
        {
            throw new MalformedResponseException(what + ": answer is for partition " + answeredPartitionId);
        }
    }

    private static BrokerErrorException decodeError(
        final MessageHeaderDecoder header,
        final ErrorResponseDecoder error,
        final DirectBuffer buffer,
        final int length,
        final String what)
    {
        error.wrap(buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        final ErrorCode code = error.code();
        final int leaderId = error.leaderId();
        checkVarData(buffer, error.limit(), length, what);
        final String message = error.message();
        checkLimit(error.limit(), length, what);
        return new BrokerErrorException(code == null ? ErrorCode.SBE_UNKNOWN : code, leaderId,
            message.isEmpty() ? what + ": " + code : message);
    }

    private static final class Frame
    {
        final MessageHeaderDecoder header = new MessageHeaderDecoder();
        final ErrorResponseDecoder error = new ErrorResponseDecoder();
    }
}
