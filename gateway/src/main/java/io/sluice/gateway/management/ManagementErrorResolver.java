package io.sluice.gateway.management;

import io.sluice.gateway.web.ManagementErrorBody;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.web.ErrorResponse;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Answers Spring MVC's own errors that happen outside any controller (no such path: the management
 * context's static-resource handler raises NoResourceFoundException) with the JSON error body, where
 * they would otherwise become Boot's default error page. Failures inside controllers are
 * {@link ManagementErrorHandler}'s.
 */
@ManagementComponent
public class ManagementErrorResolver implements HandlerExceptionResolver, Ordered
{
    @Override
    public ModelAndView resolveException(
        final HttpServletRequest request, final HttpServletResponse response, final Object handler, final Exception e)
    {
        if (handler instanceof HandlerMethod || !(e instanceof ErrorResponse errorResponse) || response.isCommitted())
        {
            return null;
        }
        final HttpStatusCode status = errorResponse.getStatusCode();
        final String detail = errorResponse.getBody().getDetail();
        try
        {
            response.setStatus(status.value());
            response.setContentType(MediaType.APPLICATION_JSON_VALUE);
            response.setCharacterEncoding(StandardCharsets.UTF_8.name());
            response.getWriter().write(ManagementErrorBody.of(status, detail != null ? detail : e.getMessage()).toJson());
            return new ModelAndView();
        }
        catch (final IOException ioe)
        {
            return null;
        }
    }

    @Override
    public int getOrder()
    {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
