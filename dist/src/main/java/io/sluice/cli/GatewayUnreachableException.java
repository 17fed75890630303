package io.sluice.cli;

/** The gateway refused the connection, or did not answer within the CLI's timeout. */
public final class GatewayUnreachableException extends Exception
{
    private static final long serialVersionUID = 1L;

    public GatewayUnreachableException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
