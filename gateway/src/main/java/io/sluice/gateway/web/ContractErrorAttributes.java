package io.sluice.gateway.web;

import org.springframework.boot.web.error.ErrorAttributeOptions;
import org.springframework.boot.webmvc.error.DefaultErrorAttributes;
import org.springframework.web.context.request.WebRequest;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The body of Spring's own error page on the client port ({@code /error}: no such path, wrong method, an error
 * status sent by the container) as CONTRACT §3 has it: exactly {@code {"error", "message"}}.
 */
public final class ContractErrorAttributes extends DefaultErrorAttributes
{
    @Override
    public Map<String, Object> getErrorAttributes(final WebRequest request, final ErrorAttributeOptions options)
    {
        final Map<String, Object> all = super.getErrorAttributes(request,
            options.including(ErrorAttributeOptions.Include.MESSAGE));
        final Object error = all.getOrDefault("error", "Error");
        final Object message = all.get("message");
        final Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        body.put("message", message == null || String.valueOf(message).isBlank() ?
            error + " (" + all.getOrDefault("path", "") + ")" : message);
        return body;
    }
}
