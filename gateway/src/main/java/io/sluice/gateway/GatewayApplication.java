package io.sluice.gateway;

import io.sluice.protocol.concurrent.CommonPool;
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
        CommonPool.raiseParallelismIfSingle(); // before anything loads CompletableFuture, as sluice.jar's main does
        SpringApplication.run(GatewayApplication.class, args);
    }
}
