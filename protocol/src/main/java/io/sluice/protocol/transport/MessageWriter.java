package io.sluice.protocol.transport;

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
}
