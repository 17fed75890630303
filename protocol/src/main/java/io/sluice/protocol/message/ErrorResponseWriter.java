package io.sluice.protocol.message;

import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ErrorResponseEncoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.transport.MessageWriter;
import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;

/**
 * Encodes an {@code ErrorResponse}: reusable, set with {@link #set} before each use. Not thread-safe: keep
 * one per thread (or use {@link #of} off the hot path).
 */
public final class ErrorResponseWriter implements MessageWriter
{
    /** Longest message text kept, in UTF-8 bytes; longer text is cut, so an error always fits a frame. */
    public static final int MAX_MESSAGE_BYTES = 8 * 1024;

    /** Value of {@code leaderId} when no leader is known. */
    public static final int NO_LEADER = ErrorResponseEncoder.leaderIdNullValue();

    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final ErrorResponseEncoder encoder = new ErrorResponseEncoder();
    private ErrorCode code = ErrorCode.INTERNAL_ERROR;
    private int partitionId;
    private int leaderId = NO_LEADER;
    private byte[] message = new byte[0];

    /** A fresh writer holding these values. */
    public static ErrorResponseWriter of(
        final ErrorCode code, final int partitionId, final int leaderId, final String message)
    {
        return new ErrorResponseWriter().set(code, partitionId, leaderId, message);
    }

    /**
     * @param partitionId the partition concerned, or 0.
     * @param leaderId    with NOT_LEADER, the leader this broker knows, or {@link #NO_LEADER}.
     */
    public ErrorResponseWriter set(final ErrorCode code, final int partitionId, final int leaderId, final String message)
    {
        if (code == null || code == ErrorCode.NULL_VAL || code == ErrorCode.SBE_UNKNOWN)
        {
            throw new IllegalArgumentException("an error response needs a real error code, was " + code);
        }
        this.code = code;
        this.partitionId = partitionId;
        this.leaderId = leaderId;
        final byte[] bytes = (message == null ? "" : message).getBytes(StandardCharsets.UTF_8);
        this.message = bytes.length <= MAX_MESSAGE_BYTES ? bytes : truncate(bytes);
        return this;
    }

    public ErrorCode code()
    {
        return code;
    }

    public int encodedLength()
    {
        return MessageHeaderEncoder.ENCODED_LENGTH + ErrorResponseEncoder.BLOCK_LENGTH +
            ErrorResponseEncoder.messageHeaderLength() + message.length;
    }

    public void write(final MutableDirectBuffer buffer, final int offset)
    {
        encoder.wrapAndApplyHeader(buffer, offset, headerEncoder)
            .code(code)
            .partitionId(partitionId)
            .leaderId(leaderId)
            .putMessage(message, 0, message.length);
    }

    private static byte[] truncate(final byte[] bytes)
    {
        int end = MAX_MESSAGE_BYTES;
        while (end > 0 && (bytes[end] & 0xC0) == 0x80)
        {
            end--; // do not cut a UTF-8 sequence in half
        }
        final byte[] cut = new byte[end];
        System.arraycopy(bytes, 0, cut, 0, end);
        return cut;
    }
}
