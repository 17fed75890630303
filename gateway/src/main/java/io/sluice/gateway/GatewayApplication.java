package io.sluice.gateway;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The Sluice gateway: the client API on {@code server.port} and the management API on
 * {@code management.server.port}. Component scanning covers every {@code io.sluice.gateway} package.
 */
@SpringBootApplication
public class GatewayApplication
{
    public static void main(final String[] args)
    {
        SpringApplication.run(GatewayApplication.class, args);
    }
}
