package io.sluice.gateway.web;

import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.coyote.ActionCode;
import org.springframework.http.HttpStatus;

import java.io.IOException;
import java.io.Writer;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Tomcat's last word on an error, as the JSON error body of CONTRACT §3 instead of its HTML page: what the container
 * refuses before any servlet runs (a {@code %00} or {@code %2F} in a path, a NUL in a header, a request line or
 * headers over their limit) and any error status no servlet wrote a body for. Installed on the host of both the
 * client and the management server by {@link ContainerErrorsAsJson}; Tomcat creates it by class name.
 */
public class JsonErrorReportValve extends ErrorReportValve
{
    @Override
    protected void report(final Request request, final Response response, final Throwable throwable)
    {
        final int status = response.getStatus();
        if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported())
        {
            return;
        }
        final AtomicBoolean ioAllowed = new AtomicBoolean(true);
        response.getCoyoteResponse().action(ActionCode.IS_IO_ALLOWED, ioAllowed);
        if (!ioAllowed.get())
        {
            return;
        }
        final HttpStatus known = HttpStatus.resolve(status);
        final String reason = known != null ? known.getReasonPhrase() : "Error " + status;
        String message = response.getMessage();
        if ((message == null || message.isBlank()) && throwable != null)
        {
            message = throwable.getMessage();
        }
        if (message == null || message.isBlank())
        {
            message = "the HTTP server refused the request (" + reason + ")";
        }
        final String body = new ManagementErrorBody(reason, message).toJson();
        try
        {
            response.setContentType("application/json");
            response.setCharacterEncoding("UTF-8");
            final Writer writer = response.getReporter();
            if (writer != null)
            {
                writer.write(body);
                response.finishResponse();
            }
        }
        catch (final IOException | IllegalStateException e)
        {
            // The client is gone or the response was committed meanwhile: nothing more can be said.
        }
    }
}
