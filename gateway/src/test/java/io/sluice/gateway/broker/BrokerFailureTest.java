package io.sluice.gateway.broker;

import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.transport.PeerUnreachableException;
import io.sluice.protocol.transport.RequestTimeoutException;
import io.sluice.protocol.transport.TransportException;
import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;

class BrokerFailureTest
{
    @Test
    void aCompletionExceptionWithoutACauseIsItsOwnFailure()
    {
        // Taking failures out of their wrappers is Futures.unwrapAll's (FuturesTest in the protocol module).
        final CompletionException empty = new CompletionException("nothing inside", null);

        assertThat(BrokerFailure.of(empty)).isEqualTo(BrokerFailure.OTHER);
        assertThat(BrokerFailure.of(new CompletionException(new ExecutionException(new CompletionException(
            new RequestTimeoutException("no answer")))))).isEqualTo(BrokerFailure.TIMED_OUT);
    }

    @Test
    void theTransportsAndTheFuturesTimeoutsAreTimedOut()
    {
        assertThat(BrokerFailure.of(new CompletionException(new RequestTimeoutException("late"))))
            .isEqualTo(BrokerFailure.TIMED_OUT);
        assertThat(BrokerFailure.of(new TimeoutException())).isEqualTo(BrokerFailure.TIMED_OUT);
    }

    @Test
    void noConnectionIsUnreachableAndOtherTransportTroubleIsTransport()
    {
        assertThat(BrokerFailure.of(new PeerUnreachableException("refused", new ConnectException())))
            .isEqualTo(BrokerFailure.UNREACHABLE);
        assertThat(BrokerFailure.of(new TransportException("too many requests in flight")))
            .isEqualTo(BrokerFailure.TRANSPORT);
        assertThat(BrokerFailure.of(new MalformedResponseException("truncated"))).isEqualTo(BrokerFailure.MALFORMED);
    }

    @Test
    void aBrokerThatCannotServeNowIsUnavailableAndAnyOtherErrorIsRefused()
    {
        for (final ErrorCode code : new ErrorCode[] {
            ErrorCode.NOT_LEADER, ErrorCode.UNAVAILABLE, ErrorCode.TIMEOUT, ErrorCode.RESOURCE_EXHAUSTED})
        {
            assertThat(BrokerFailure.of(new BrokerErrorException(code, -1, "x"))).as(code.name())
                .isEqualTo(BrokerFailure.UNAVAILABLE);
        }
        assertThat(BrokerFailure.of(new CompletionException(new BrokerErrorException(ErrorCode.CONFLICT, -1, "x"))))
            .isEqualTo(BrokerFailure.REFUSED);
        assertThat(BrokerFailure.of(new IllegalArgumentException("not in the distribution")))
            .isEqualTo(BrokerFailure.OTHER);
    }

    @Test
    void onlyANotLeaderAnswerGivesALeaderHint()
    {
        assertThat(BrokerFailure.leaderHint(new CompletionException(new BrokerErrorException(ErrorCode.NOT_LEADER, 2, "x"))))
            .isEqualTo(2);
        assertThat(BrokerFailure.leaderHint(new BrokerErrorException(ErrorCode.UNAVAILABLE, 2, "x"))).isEqualTo(-1);
        assertThat(BrokerFailure.leaderHint(new RequestTimeoutException("late"))).isEqualTo(-1);
        assertThat(BrokerFailure.errorCode(new CompletionException(new BrokerErrorException(ErrorCode.CONFLICT, -1, "x"))))
            .isEqualTo(ErrorCode.CONFLICT);
        assertThat(BrokerFailure.errorCode(new RequestTimeoutException("late"))).isNull();
    }
}
