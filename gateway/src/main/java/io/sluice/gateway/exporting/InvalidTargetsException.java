package io.sluice.gateway.exporting;

/** The request names targets that cannot be acted on (or cannot be read); nothing was sent to any broker. */
public final class InvalidTargetsException extends IllegalArgumentException
{
    public InvalidTargetsException(final String message)
    {
        super(message);
    }
}
