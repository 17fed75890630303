package io.sluice.protocol.transport;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Something that writes one message (an SBE header and body) into a frame the transport owns, so the
 * caller never allocates a buffer of its own on the send path.
 */
public interface MessageWriter
{
    /** Exact number of bytes {@link #write} will write. */
    int encodedLength();

    /** Writes exactly {@link #encodedLength()} bytes at {@code offset}. */
    void write(MutableDirectBuffer buffer, int offset);

    /**
     * A writer of bytes already encoded elsewhere. The bytes are read when the transport writes the
     * frame (during {@code send}/{@code respond}), so the buffer may be reused once that call returns.
     */
    static MessageWriter of(final DirectBuffer buffer, final int offset, final int length)
    {
        if (offset < 0 || length < 0 || (long)offset + length > buffer.capacity())
        {
            throw new IndexOutOfBoundsException(
                "offset=" + offset + " length=" + length + " capacity=" + buffer.capacity());
        }
        return new MessageWriter()
        {
            public int encodedLength()
            {
                return length;
            }

            public void write(final MutableDirectBuffer target, final int targetOffset)
            {
                target.putBytes(targetOffset, buffer, offset, length);
            }
        };
    }
}
