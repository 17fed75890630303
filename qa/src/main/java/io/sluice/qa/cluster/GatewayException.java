package io.sluice.qa.cluster;

/** The gateway answered something other than what the call expected. */
public final class GatewayException extends RuntimeException
{
    private final HttpAnswer answer;

    public GatewayException(final String what, final HttpAnswer answer)
    {
        super(what + ": " + answer);
        this.answer = answer;
    }

    public GatewayException(final String what, final Throwable cause)
    {
        super(what + ": " + cause, cause);
        this.answer = null;
    }

    /** The answer, or null when there was none (connection refused, timeout). */
    public HttpAnswer answer()
    {
        return answer;
    }
}
