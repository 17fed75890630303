package io.sluice.protocol.transport;

/**
 * Layout of one transport frame on the wire, all integers little-endian:
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                 Frame Length (bytes after this field)         |
 *  +---------------------------------------------------------------+
 *  |                        Correlation Id                        ...
 * ...                                                              |
 *  +---------------------------------------------------------------+
 *  |                 Message (SBE header + body)                  ...
 * ...                                                              |
 *  +---------------------------------------------------------------+
 * </pre>
 * A response carries the correlation id of its request. The frame length counts the correlation id
 * and the message, so it is at least {@link #CORRELATION_ID_LENGTH}.
 */
public final class FrameDescriptor
{
    public static final int FRAME_LENGTH_OFFSET = 0;
    public static final int FRAME_LENGTH_FIELD_LENGTH = 4;
    public static final int CORRELATION_ID_OFFSET = FRAME_LENGTH_OFFSET + FRAME_LENGTH_FIELD_LENGTH;
    public static final int CORRELATION_ID_LENGTH = 8;
    public static final int MESSAGE_OFFSET = CORRELATION_ID_OFFSET + CORRELATION_ID_LENGTH;

    /** Bytes in front of the message: the length prefix and the correlation id. */
    public static final int HEADER_LENGTH = MESSAGE_OFFSET;

    /** Smallest legal value of the frame length field: a correlation id and an empty message. */
    public static final int MIN_FRAME_LENGTH = CORRELATION_ID_LENGTH;

    private FrameDescriptor()
    {
    }

    /** Value of the frame length field for a message of {@code messageLength} bytes. */
    public static int frameLength(final int messageLength)
    {
        return CORRELATION_ID_LENGTH + messageLength;
    }

    /** Message length carried by a frame whose length field holds {@code frameLength}. */
    public static int messageLength(final int frameLength)
    {
        return frameLength - CORRELATION_ID_LENGTH;
    }
}
