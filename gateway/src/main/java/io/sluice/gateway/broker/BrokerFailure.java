package io.sluice.gateway.broker;

import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.concurrent.Futures;
import io.sluice.protocol.transport.PeerUnreachableException;
import io.sluice.protocol.transport.RequestTimeoutException;
import io.sluice.protocol.transport.TransportException;

import java.util.concurrent.TimeoutException;

/**
 * What went wrong with a request to a broker, decided in one place for the whole gateway: the append retry loop,
 * the HTTP answers and every fan-out (exporting, backfill, rebalance, exporters) classify through {@link #of}, and
 * take a future's failure out of its wrappers with {@link Futures#unwrapAll}.
 */
public enum BrokerFailure
{
    /** No answer within the deadline: the request may still take effect there. */
    TIMED_OUT,
    /** No connection to the broker could be had, or it broke before the answer. */
    UNREACHABLE,
    /** This gateway's transport could not carry the request (closed, too many in flight, too large). */
    TRANSPORT,
    /** The broker answered that it cannot serve the request now (not leader, unavailable, busy, its own timeout). */
    UNAVAILABLE,
    /** The broker answered with an error another try will not change. */
    REFUSED,
    /** The answer could not be decoded. */
    MALFORMED,
    /** Not a failure of the request to a broker: a bad argument or a bug. */
    OTHER;

    /** Classifies a failure, wrapped or not. */
    public static BrokerFailure of(final Throwable failure)
    {
        final Throwable cause = Futures.unwrapAll(failure);
        if (cause instanceof BrokerErrorException brokerError)
        {
            return isTransient(brokerError.code()) ? UNAVAILABLE : REFUSED;
        }
        if (cause instanceof RequestTimeoutException || cause instanceof TimeoutException)
        {
            return TIMED_OUT;
        }
        if (cause instanceof PeerUnreachableException)
        {
            return UNREACHABLE;
        }
        if (cause instanceof MalformedResponseException)
        {
            return MALFORMED;
        }
        if (cause instanceof TransportException)
        {
            return TRANSPORT;
        }
        return OTHER;
    }

    /** The broker's error code when it answered with an error, else null. */
    public static ErrorCode errorCode(final Throwable failure)
    {
        return Futures.unwrapAll(failure) instanceof BrokerErrorException brokerError ? brokerError.code() : null;
    }

    /** The leader a NOT_LEADER answer named, or -1 (no such answer, or no leader known). */
    public static int leaderHint(final Throwable failure)
    {
        return Futures.unwrapAll(failure) instanceof BrokerErrorException brokerError && brokerError.code() == ErrorCode.NOT_LEADER ?
            brokerError.leaderId() : -1;
    }

    private static boolean isTransient(final ErrorCode code)
    {
        return code == ErrorCode.NOT_LEADER || code == ErrorCode.UNAVAILABLE || code == ErrorCode.TIMEOUT ||
            code == ErrorCode.RESOURCE_EXHAUSTED;
    }
}
