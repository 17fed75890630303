package io.sluice.gateway.records;

/** A client's records were refused before anything was sent: answered 400 with {@code error} and the message. */
public final class InvalidRecordException extends RuntimeException
{
    private final String error;

    public InvalidRecordException(final String error, final String message)
    {
        super(message);
        this.error = error;
    }

    public String error()
    {
        return error;
    }
}
