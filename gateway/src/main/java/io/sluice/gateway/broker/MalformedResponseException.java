package io.sluice.gateway.broker;

import io.sluice.protocol.transport.TransportException;

/** A broker's answer could not be decoded (wrong schema, unexpected template, truncated). Never retried. */
public final class MalformedResponseException extends TransportException
{
    public MalformedResponseException(final String message)
    {
        super(message);
    }

    public MalformedResponseException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
