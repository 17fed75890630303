package io.sluice.broker.backfill;

/** Bytes that should hold a backfill entry or snapshot do not: truncated, unknown version or type, bad values. */
public final class BackfillCodecException extends IllegalArgumentException
{
    public BackfillCodecException(final String message)
    {
        super(message);
    }
}
