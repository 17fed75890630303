package io.sluice.gateway.security;

import io.sluice.gateway.exporting.ExportingHttpTest;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ManagementBindingPolicyTest
{
    private final ManagementBindingPolicy policy = new ManagementBindingPolicy();

    @Test
    void withoutATokenTheManagementServerDefaultsToLoopback()
    {
        final StandardEnvironment environment = environment(Map.of());

        policy.postProcessEnvironment(environment, servletApplication());

        assertThat(environment.getProperty("management.server.address")).isEqualTo("127.0.0.1");
    }

    @ParameterizedTest
    @ValueSource(strings = { "127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2" })
    void aLoopbackAddressNeedsNoToken(final String address)
    {
        final StandardEnvironment environment = environment(Map.of("management.server.address", address));

        policy.postProcessEnvironment(environment, servletApplication());
        ManagementBindingPolicy.check(environment);

        assertThat(environment.getProperty("management.server.address")).isEqualTo(address);
    }

    @ParameterizedTest
    @ValueSource(strings = { "0.0.0.0", "::", "10.1.2.3", "192.168.1.20" })
    void aNonLoopbackAddressWithoutATokenIsRefusedNamingBothSettings(final String address)
    {
        assertThatThrownBy(() -> ManagementBindingPolicy.check(environment(Map.of("management.server.address", address))))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("management.server.address: '" + address + "' is not a loopback address")
            .hasMessageContaining("sluice.management.token is not set")
            .hasMessageNotContaining("\n");
    }

    @Test
    void aTokenAllowsAnyAddressButDoesNotMoveTheManagementPortOffLoopback()
    {
        final StandardEnvironment withAddress =
            environment(Map.of("management.server.address", "0.0.0.0", "sluice.management.token", "t"));
        final StandardEnvironment withoutAddress = environment(Map.of("sluice.management.token", "t"));

        policy.postProcessEnvironment(withAddress, servletApplication());
        policy.postProcessEnvironment(withoutAddress, servletApplication());
        ManagementBindingPolicy.check(withAddress);

        assertThat(withAddress.getProperty("management.server.address")).isEqualTo("0.0.0.0");
        assertThat(withoutAddress.getProperty("management.server.address")).isEqualTo("127.0.0.1");
    }

    @Test
    void aBlankTokenCountsAsNoToken()
    {
        assertThatThrownBy(() -> ManagementBindingPolicy.check(
            environment(Map.of("management.server.address", "0.0.0.0", "sluice.management.token", " "))))
            .isInstanceOf(InvalidClusterConfigException.class);
    }

    @Test
    void theGatewayRefusesToStartOnAllInterfacesWithoutAToken()
    {
        final Throwable failure = catchThrowable(() -> start("management.server.address=0.0.0.0").close());

        assertThat(failure).isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageContaining("management.server.address")
            .hasMessageContaining("sluice.management.token");
    }

    @Test
    void theGatewayWithoutATokenListensOnLoopbackOnly() throws IOException
    {
        try (ConfigurableApplicationContext context = start())
        {
            final int port = context.getEnvironment().getRequiredProperty("local.management.port", Integer.class);

            assertThat(context.getEnvironment().getProperty("management.server.address")).isEqualTo("127.0.0.1");
            try (Socket loopback = new Socket())
            {
                loopback.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5_000);
            }
            final Optional<InetAddress> external = nonLoopbackAddress();
            if (external.isPresent())
            {
                final Throwable refused = catchThrowable(() ->
                {
                    try (Socket socket = new Socket())
                    {
                        socket.connect(new InetSocketAddress(external.get(), port), 5_000);
                    }
                });
                assertThat(refused).as("management port %d reachable on %s", port, external.get()).isInstanceOf(IOException.class);
            }
        }
    }

    private static ConfigurableApplicationContext start(final String... properties)
    {
        final String[] args = new String[properties.length + 3];
        args[0] = "--server.port=0";
        args[1] = "--management.server.port=0";
        args[2] = "--management.endpoint.health.group.readiness.include=readinessState";
        for (int i = 0; i < properties.length; i++)
        {
            args[i + 3] = "--" + properties[i];
        }
        return new SpringApplicationBuilder(ExportingHttpTest.FakeCluster.class)
            .web(WebApplicationType.SERVLET)
            .run(args);
    }

    private static Optional<InetAddress> nonLoopbackAddress() throws IOException
    {
        for (final NetworkInterface network : Collections.list(NetworkInterface.getNetworkInterfaces()))
        {
            if (network.isUp() && !network.isLoopback())
            {
                for (final InetAddress address : Collections.list(network.getInetAddresses()))
                {
                    if (address instanceof Inet4Address)
                    {
                        return Optional.of(address);
                    }
                }
            }
        }
        return Optional.empty();
    }

    private static SpringApplication servletApplication()
    {
        final SpringApplication application = new SpringApplication();
        application.setWebApplicationType(WebApplicationType.SERVLET);
        return application;
    }

    private static StandardEnvironment environment(final Map<String, Object> properties)
    {
        final StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("test", new HashMap<>(properties)));
        return environment;
    }
}
