package io.sluice.protocol.transport;

/** The request's deadline passed before an answer came; its pending entry has been removed. */
public final class RequestTimeoutException extends TransportException
{
    public RequestTimeoutException(final String message)
    {
        super(message);
    }
}
