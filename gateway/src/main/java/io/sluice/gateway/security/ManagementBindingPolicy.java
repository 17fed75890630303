package io.sluice.gateway.security;

import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Map;

/**
 * The management API can pause exporting cluster-wide, so without {@code sluice.management.token} it must
 * not be reachable from other hosts: with no token and no {@code management.server.address}, the management
 * server binds 127.0.0.1; with no token and a non-loopback address, the gateway refuses to start with one
 * line naming both settings. Runs after the configuration files are read; listed in
 * {@code META-INF/spring.factories}. Only servlet applications (the gateway) are concerned.
 */
public final class ManagementBindingPolicy implements EnvironmentPostProcessor, Ordered
{
    public static final String ADDRESS_SETTING = "management.server.address";
    public static final String LOOPBACK = "127.0.0.1";
    static final String PROPERTY_SOURCE_NAME = "sluiceManagementBindingDefaults";

    @Override
    public void postProcessEnvironment(final ConfigurableEnvironment environment, final SpringApplication application)
    {
        if (application.getWebApplicationType() != WebApplicationType.SERVLET)
        {
            return;
        }
        final String token = environment.getProperty(ManagementAuthorizationFilter.TOKEN_SETTING);
        if (token != null && !token.isBlank())
        {
            return;
        }
        final String address = environment.getProperty(ADDRESS_SETTING);
        if (address == null || address.isBlank())
        {
            environment.getPropertySources().addLast(new MapPropertySource(PROPERTY_SOURCE_NAME, Map.of(ADDRESS_SETTING, LOOPBACK)));
            return;
        }
        if (!isLoopback(address.trim()))
        {
            throw new InvalidClusterConfigException(ADDRESS_SETTING, "'" + address.trim() + "' is not a loopback address " +
                "and " + ManagementAuthorizationFilter.TOKEN_SETTING + " is not set: set " +
                ManagementAuthorizationFilter.TOKEN_SETTING + " to expose the management API, or bind it to " + LOOPBACK);
        }
    }

    @Override
    public int getOrder()
    {
        // After ConfigDataEnvironmentPostProcessor (application.properties, profiles).
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
