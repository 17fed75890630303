package io.sluice.gateway.security;

import io.sluice.gateway.web.ManagementErrorBody;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.filter.OncePerRequestFilter;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.Principal;
import java.util.Set;

/**
 * Guards every mutating management call (POST, PUT, PATCH, DELETE): with {@code sluice.management.token}
 * set it needs {@code Authorization: Bearer <token>}, compared in constant time; without a token it is
 * accepted from loopback only (the management server binds loopback then, see {@link ManagementBindingPolicy};
 * this also covers a management API sharing the client port). Anything else gets 401 with the JSON error
 * body. Reads pass; a read carrying the valid token (or any read while no token is set) is marked as coming from
 * an authorised caller, which is what {@code GET /actuator/health} asks before it shows component details
 * ({@code management.endpoint.health.show-details=when-authorized}). The token is never logged. Thread-safe.
 */
public final class ManagementAuthorizationFilter extends OncePerRequestFilter
{
    public static final String TOKEN_SETTING = "sluice.management.token";

    private static final Logger LOG = LoggerFactory.getLogger(ManagementAuthorizationFilter.class);
    private static final Set<String> MUTATING_METHODS = Set.of("POST", "PUT", "PATCH", "DELETE");
    private static final String BEARER = "Bearer ";
    private static final Principal OPERATOR = () -> "sluice-operator";

    private final byte[] token;
    private final String pathPrefix;

    /**
     * @param token      the bearer token, or null/blank for none.
     * @param pathPrefix only requests under this path are guarded ("" for all: a dedicated management server).
     */
    public ManagementAuthorizationFilter(final String token, final String pathPrefix)
    {
        this.token = token == null || token.isBlank() ? null : token.getBytes(StandardCharsets.UTF_8);
        this.pathPrefix = pathPrefix == null ? "" : pathPrefix;
    }

    public boolean requiresToken()
    {
        return token != null;
    }

    @Override
    protected boolean shouldNotFilter(final HttpServletRequest request)
    {
        final String path = request.getRequestURI().substring(request.getContextPath().length());
        return !pathPrefix.isEmpty() && !(path.equals(pathPrefix) || path.startsWith(pathPrefix + "/"));
    }

    @Override
    protected void doFilterInternal(
        final HttpServletRequest request, final HttpServletResponse response, final FilterChain chain)
        throws ServletException, IOException
    {
        if (!MUTATING_METHODS.contains(request.getMethod()))
        {
            // Reads pass either way; without a token set every caller counts as authorised.
            chain.doFilter(token == null || refusal(request) == null ? authorised(request) : request, response);
            return;
        }
        final String refusal = refusal(request);
        if (refusal == null)
        {
            chain.doFilter(authorised(request), response);
            return;
        }
        LOG.warn("refused {} {} from {}: {}", request.getMethod(), request.getRequestURI(), request.getRemoteAddr(), refusal);
        response.setStatus(HttpStatus.UNAUTHORIZED.value());
        response.setHeader("WWW-Authenticate", "Bearer realm=\"sluice-management\"");
        response.setContentType(MediaType.APPLICATION_JSON_VALUE);
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.getWriter().write(ManagementErrorBody.of(HttpStatus.UNAUTHORIZED, refusal).toJson());
    }

    /** The request as from the authorised operator: a principal, in no particular role. */
    private static HttpServletRequest authorised(final HttpServletRequest request)
    {
        return new HttpServletRequestWrapper(request)
        {
            @Override
            public Principal getUserPrincipal()
            {
                return OPERATOR;
            }
        };
    }

    /** Why the request is refused, or null if it may pass. Never includes the presented credentials. */
    private String refusal(final HttpServletRequest request)
    {
        if (token == null)
        {
            return isLoopback(request.getRemoteAddr()) ? null :
                "mutating management calls are accepted from loopback only while " + TOKEN_SETTING + " is not set";
        }
        final String authorization = request.getHeader("Authorization");
        if (authorization == null || authorization.isBlank())
        {
            return "missing 'Authorization: Bearer <token>' header (" + TOKEN_SETTING + " is set)";
        }
        if (authorization.length() < BEARER.length() || !authorization.regionMatches(true, 0, BEARER, 0, BEARER.length()))
        {
            return "the Authorization header must use the Bearer scheme";
        }
        final byte[] presented = authorization.substring(BEARER.length()).trim().getBytes(StandardCharsets.UTF_8);
        return MessageDigest.isEqual(token, presented) ? null : "invalid bearer token";
    }

    private static boolean isLoopback(final String remoteAddress)
    {
        try
        {
            // A literal address from the connection: no name lookup happens.
            return remoteAddress != null && InetAddress.getByName(remoteAddress).isLoopbackAddress();
        }
        catch (final UnknownHostException e)
        {
            return false;
        }
    }
}
