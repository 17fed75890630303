package io.sluice.gateway.security;

import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.web.context.WebApplicationContext;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Map;

/**
 * The management API can pause exporting cluster-wide, so without {@code sluice.management.token} it must
 * not be reachable from other hosts. Binding is its own setting: with no {@code management.server.address}, the
 * management server on a port of its own binds 127.0.0.1, token or not (set as an environment post-processor, after the
 * configuration files are read), so setting a token never moves the port onto other interfaces; exposing it
 * takes an explicit address. With no token and a non-loopback address, the gateway refuses to start, before any port is bound, with
 * one line naming both settings (checked as a context initializer, once logging is configured, so the
 * launcher's one-line report is all an operator sees). Both are listed in {@code META-INF/spring.factories};
 * only web applications (the gateway) are concerned.
 */
public final class ManagementBindingPolicy
    implements EnvironmentPostProcessor, ApplicationContextInitializer<ConfigurableApplicationContext>, Ordered
{
    public static final String ADDRESS_SETTING = "management.server.address";
    public static final String LOOPBACK = "127.0.0.1";
    static final String PROPERTY_SOURCE_NAME = "sluiceManagementBindingDefaults";

    @Override
    public void postProcessEnvironment(final ConfigurableEnvironment environment, final SpringApplication application)
    {
        if (application.getWebApplicationType() == WebApplicationType.SERVLET &&
            isBlank(environment.getProperty(ADDRESS_SETTING)) && hasOwnPort(environment))
        {
            environment.getPropertySources().addLast(new MapPropertySource(PROPERTY_SOURCE_NAME, Map.of(ADDRESS_SETTING, LOOPBACK)));
        }
    }

    @Override
    public void initialize(final ConfigurableApplicationContext context)
    {
        if (context instanceof WebApplicationContext)
        {
            check(context.getEnvironment());
        }
    }

    /**
     * @throws InvalidClusterConfigException naming {@value #ADDRESS_SETTING} and the token setting when the
     *                                       management server would listen beyond loopback without a token.
     */
    public static void check(final Environment environment)
    {
        final String address = environment.getProperty(ADDRESS_SETTING);
        if (!hasToken(environment) && !isBlank(address) && !isLoopback(address.trim()))
        {
            throw new InvalidClusterConfigException(ADDRESS_SETTING, "'" + address.trim() + "' is not a loopback address " +
                "and " + ManagementAuthorizationFilter.TOKEN_SETTING + " is not set: set " +
                ManagementAuthorizationFilter.TOKEN_SETTING + " to expose the management API, or bind it to " + LOOPBACK);
        }
    }

    /**
     * Whether the management server listens on a port of its own: Spring Boot refuses a management address
     * otherwise, and the API then follows {@code server.address}.
     */
    private static boolean hasOwnPort(final Environment environment)
    {
        // The gateway's application.properties gives it one (9600): unset means a context without those files.
        final String port = environment.getProperty("management.server.port");
        if (port == null)
        {
            return true;
        }
        final String trimmed = port.trim();
        if (trimmed.isEmpty() || trimmed.equals("-1"))
        {
            return false;
        }
        // As Spring Boot decides: port 0 is a random port of its own, else the same number shares the server's.
        return trimmed.equals("0") || !trimmed.equals(environment.getProperty("server.port", "8080").trim());
    }

    private static boolean hasToken(final Environment environment)
    {
        return !isBlank(environment.getProperty(ManagementAuthorizationFilter.TOKEN_SETTING));
    }

    private static boolean isBlank(final String value)
    {
        return value == null || value.isBlank();
    }

    @Override
    public int getOrder()
    {
        // As a post-processor: after ConfigDataEnvironmentPostProcessor (application.properties, profiles).
        return Ordered.LOWEST_PRECEDENCE;
    }

    static boolean isLoopback(final String address)
    {
        try
        {
            final String host = address.startsWith("[") && address.endsWith("]") ?
                address.substring(1, address.length() - 1) : address;
            return InetAddress.getByName(host).isLoopbackAddress();
        }
        catch (final UnknownHostException e)
        {
            return false;
        }
    }
}
