package io.sluice.gateway.management;

import org.springframework.http.HttpStatusCode;

/**
 * A management request that cannot be served, with the status to answer and a message naming the values
 * ("unknown exporter 'file2'"); {@link ManagementErrorHandler} turns it into the JSON error body.
 */
public class ManagementException extends RuntimeException
{
    private final HttpStatusCode status;

    public ManagementException(final HttpStatusCode status, final String message)
    {
        super(message);
        this.status = status;
    }

    public HttpStatusCode status()
    {
        return status;
    }
}
