package io.sluice.protocol.transport;

import java.time.Duration;

/**
 * Settings of a {@link TransportServer} or {@link TransportClient}.
 *
 * @param maxFrameLength           largest accepted value of a frame's length field (correlation id + message);
 *                                 a peer announcing more is disconnected.
 * @param maxInFlightPerConnection requests a client keeps outstanding on one connection; a send beyond it
 *                                 fails fast with a {@link TransportException}.
 * @param connectTimeout           how long a client waits for a TCP connection before the peer counts as unreachable.
 * @param reconnectBackoff         after a failed or dropped connection, sends to that peer fail fast for this long
 *                                 before the next send tries to connect again; doubled on each consecutive failure.
 * @param maxReconnectBackoff      upper bound of the doubled backoff.
 * @param ioThreads                event loop threads (a server's for its connections, a client's for all peers).
 * @param shutdownTimeout          bound on how long {@code close()} waits for event loops to stop.
 */
public record TransportConfig(
    int maxFrameLength,
    int maxInFlightPerConnection,
    Duration connectTimeout,
    Duration reconnectBackoff,
    Duration maxReconnectBackoff,
    int ioThreads,
    Duration shutdownTimeout)
{
    /** Largest message (SBE header + body) the defaults accept. */
    public static final int DEFAULT_MAX_MESSAGE_LENGTH = 4 * 1024 * 1024;
    public static final int DEFAULT_MAX_FRAME_LENGTH = FrameDescriptor.frameLength(DEFAULT_MAX_MESSAGE_LENGTH);
    public static final int DEFAULT_MAX_IN_FLIGHT_PER_CONNECTION = 32 * 1024;

    public TransportConfig
    {
        if (maxFrameLength < FrameDescriptor.MIN_FRAME_LENGTH + 8)
        {
            throw new IllegalArgumentException("maxFrameLength must be at least " +
                (FrameDescriptor.MIN_FRAME_LENGTH + 8) + ", was " + maxFrameLength);
        }
        if (maxInFlightPerConnection < 1)
        {
            throw new IllegalArgumentException("maxInFlightPerConnection must be at least 1, was " + maxInFlightPerConnection);
        }
        requirePositive("connectTimeout", connectTimeout);
        requirePositive("reconnectBackoff", reconnectBackoff);
        requirePositive("maxReconnectBackoff", maxReconnectBackoff);
        requirePositive("shutdownTimeout", shutdownTimeout);
        if (maxReconnectBackoff.compareTo(reconnectBackoff) < 0)
        {
            throw new IllegalArgumentException("maxReconnectBackoff " + maxReconnectBackoff +
                " is shorter than reconnectBackoff " + reconnectBackoff);
        }
        if (ioThreads < 1)
        {
            throw new IllegalArgumentException("ioThreads must be at least 1, was " + ioThreads);
        }
    }

    public static TransportConfig defaults()
    {
        return new TransportConfig(
            DEFAULT_MAX_FRAME_LENGTH,
            DEFAULT_MAX_IN_FLIGHT_PER_CONNECTION,
            Duration.ofSeconds(2),
            Duration.ofMillis(100),
            Duration.ofSeconds(2),
            1,
            Duration.ofSeconds(5));
    }

    /** Largest message this config lets through a frame. */
    public int maxMessageLength()
    {
        return FrameDescriptor.messageLength(maxFrameLength);
    }

    public TransportConfig withMaxFrameLength(final int maxFrameLength)
    {
        return new TransportConfig(maxFrameLength, maxInFlightPerConnection, connectTimeout, reconnectBackoff,
            maxReconnectBackoff, ioThreads, shutdownTimeout);
    }

    public TransportConfig withMaxInFlightPerConnection(final int maxInFlightPerConnection)
    {
        return new TransportConfig(maxFrameLength, maxInFlightPerConnection, connectTimeout, reconnectBackoff,
            maxReconnectBackoff, ioThreads, shutdownTimeout);
    }

    public TransportConfig withConnectTimeout(final Duration connectTimeout)
    {
        return new TransportConfig(maxFrameLength, maxInFlightPerConnection, connectTimeout, reconnectBackoff,
            maxReconnectBackoff, ioThreads, shutdownTimeout);
    }

    public TransportConfig withReconnectBackoff(final Duration reconnectBackoff, final Duration maxReconnectBackoff)
    {
        return new TransportConfig(maxFrameLength, maxInFlightPerConnection, connectTimeout, reconnectBackoff,
            maxReconnectBackoff, ioThreads, shutdownTimeout);
    }

    public TransportConfig withIoThreads(final int ioThreads)
    {
        return new TransportConfig(maxFrameLength, maxInFlightPerConnection, connectTimeout, reconnectBackoff,
            maxReconnectBackoff, ioThreads, shutdownTimeout);
    }

    public TransportConfig withShutdownTimeout(final Duration shutdownTimeout)
    {
        return new TransportConfig(maxFrameLength, maxInFlightPerConnection, connectTimeout, reconnectBackoff,
            maxReconnectBackoff, ioThreads, shutdownTimeout);
    }

    private static void requirePositive(final String name, final Duration value)
    {
        if (value == null || value.isNegative() || value.isZero())
        {
            throw new IllegalArgumentException(name + " must be positive, was " + value);
        }
    }
}
