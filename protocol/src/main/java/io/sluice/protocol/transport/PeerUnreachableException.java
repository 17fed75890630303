package io.sluice.protocol.transport;

/** No connection to the peer could be had (refused, reset, closed mid-request): fails fast, before the deadline. */
public final class PeerUnreachableException extends TransportException
{
    public PeerUnreachableException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
