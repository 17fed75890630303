package io.sluice.gateway.broker;

import io.sluice.protocol.codecs.ErrorCode;

/** A broker answered with an ErrorResponse. {@code leaderId} is -1 unless the code is NOT_LEADER and a leader is known. */
public final class BrokerErrorException extends RuntimeException
{
    private final ErrorCode code;
    private final int leaderId;

    public BrokerErrorException(final ErrorCode code, final int leaderId, final String message)
    {
        super(message);
        this.code = code;
        this.leaderId = leaderId;
    }

    public ErrorCode code()
    {
        return code;
    }

    public int leaderId()
    {
        return leaderId;
    }
}
