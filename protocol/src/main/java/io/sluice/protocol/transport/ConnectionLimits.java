package io.sluice.protocol.transport;

import java.time.Duration;

/**
 * What a {@link TransportServer} holds for peers it has not heard a whole frame from: a port open to a network
 * must not keep silent sockets or half-sent frames forever.
 *
 * @param maxConnections   open connections at most; a connection beyond it is closed at once.
 * @param maxBufferedBytes bytes of partial frames held across all connections; the connection whose bytes would
 *                         go beyond it is closed (a legitimate peer sends whole frames quickly, so several
 *                         maximal frames fit under the default at once).
 * @param frameTimeout     how long a connection may go without completing a frame while it owes one: since it
 *                         opened (a socket that never sends a frame), or since the first bytes of a frame that
 *                         is still incomplete. A connection idle between whole frames is not timed out.
 */
public record ConnectionLimits(int maxConnections, long maxBufferedBytes, Duration frameTimeout)
{
    public static final int DEFAULT_MAX_CONNECTIONS = 256;
    public static final long DEFAULT_MAX_BUFFERED_BYTES = 64L * 1024 * 1024;
    public static final Duration DEFAULT_FRAME_TIMEOUT = Duration.ofSeconds(15);

    public ConnectionLimits
    {
        if (maxConnections < 1)
        {
            throw new IllegalArgumentException("maxConnections must be at least 1, was " + maxConnections);
        }
        if (maxBufferedBytes < 1)
        {
            throw new IllegalArgumentException("maxBufferedBytes must be at least 1, was " + maxBufferedBytes);
        }
        if (frameTimeout == null || frameTimeout.isNegative() || frameTimeout.isZero())
        {
            throw new IllegalArgumentException("frameTimeout must be positive, was " + frameTimeout);
        }
    }

    public static ConnectionLimits defaults()
    {
        return new ConnectionLimits(DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_FRAME_TIMEOUT);
    }
}
