package io.sluice.protocol.transport;

/** Root of the transport's failures; a request future completes exceptionally with one of these. */
public class TransportException extends RuntimeException
{
    public TransportException(final String message)
    {
        super(message);
    }

    public TransportException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
