package io.sluice.gateway.web;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.filter.OncePerRequestFilter;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Refuses a request whose query string names a parameter its endpoint does not take (CONTRACT §3 "Errors"): a typo
 * such as {@code dryrun=true} or {@code sotf=true} is a 400 naming it, never a silent default. Every endpoint takes no
 * parameter except those listed here. Reads the raw query string only, so a form-typed body is never consumed.
 * Thread-safe.
 */
public final class StrictQueryParameters extends OncePerRequestFilter
{
    private final List<Rule> rules;

    /**
     * The filter for every path of one web context (the client port's, or a separate management port's), named
     * {@code name}, after the management token check; the actuator's base path comes from the environment.
     */
    public static FilterRegistrationBean<StrictQueryParameters> registration(final String name, final Environment environment)
    {
        final FilterRegistrationBean<StrictQueryParameters> registration = new FilterRegistrationBean<>(
            new StrictQueryParameters(environment.getProperty("management.endpoints.web.base-path", "/actuator")));
        registration.setName(name);
        registration.addUrlPatterns("/*");
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 20);
        return registration;
    }

    /** @param managementBasePath the actuator's base path, e.g. {@code /actuator}. */
    public StrictQueryParameters(final String managementBasePath)
    {
        final String base = Pattern.quote(managementBasePath.endsWith("/") ?
            managementBasePath.substring(0, managementBasePath.length() - 1) : managementBasePath);
        this.rules = List.of(
            new Rule("POST", Pattern.compile(base + "/exporting/pause/?"), Set.of("soft", "lease")),
            new Rule("POST", Pattern.compile(base + "/exporters/[^/]+/resetToLatestAndBackfill/?"),
                Set.of("backfillTaskCount", "dryRun")),
            new Rule("GET", Pattern.compile(base + "/prometheus/?"), Set.of("includedNames")));
    }

    private record Rule(String method, Pattern path, Set<String> parameters)
    {
    }

    @Override
    protected void doFilterInternal(
        final HttpServletRequest request, final HttpServletResponse response, final FilterChain chain)
        throws ServletException, IOException
    {
        final String query = request.getQueryString();
        if (query == null || query.isEmpty())
        {
            chain.doFilter(request, response);
            return;
        }
        final Set<String> names = new LinkedHashSet<>();
        for (final String pair : query.split("&", -1))
        {
            final int equals = pair.indexOf('=');
            final String raw = equals < 0 ? pair : pair.substring(0, equals);
            try
            {
                names.add(URLDecoder.decode(raw, StandardCharsets.UTF_8));
                if (equals >= 0)
                {
                    URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8);
                }
            }
            catch (final IllegalArgumentException e)
            {
                refuse(response, "malformed query string: " + e.getMessage());
                return;
            }
        }
        final String path = request.getRequestURI().substring(request.getContextPath().length());
        final Set<String> accepted = accepted(request.getMethod(), path);
        final List<String> unknown = new ArrayList<>();
        for (final String name : names)
        {
            if (!accepted.contains(name))
            {
                unknown.add(name.isEmpty() ? "(empty)" : name);
            }
        }
        if (!unknown.isEmpty())
        {
            refuse(response, (unknown.size() == 1 ? "unknown query parameter '" + unknown.get(0) + "'" :
                "unknown query parameters " + unknown) + " for " + request.getMethod() + " " + path +
                (accepted.isEmpty() ? ", which takes none" : ", which takes only " + String.join(", ", accepted.stream().sorted().toList())) +
                "; nothing was done");
            return;
        }
        chain.doFilter(request, response);
    }

    private Set<String> accepted(final String method, final String path)
    {
        for (final Rule rule : rules)
        {
            if (rule.method().equalsIgnoreCase(method) && rule.path().matcher(path).matches())
            {
                return rule.parameters();
            }
        }
        return Set.of();
    }

    private static void refuse(final HttpServletResponse response, final String message) throws IOException
    {
        response.setStatus(HttpStatus.BAD_REQUEST.value());
        response.setContentType(MediaType.APPLICATION_JSON_VALUE);
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.getWriter().write(ManagementErrorBody.of(HttpStatus.BAD_REQUEST, message).toJson());
    }
}
