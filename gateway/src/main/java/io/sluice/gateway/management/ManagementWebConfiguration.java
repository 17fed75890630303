package io.sluice.gateway.management;

import io.sluice.gateway.security.ManagementAuthorizationFilter;
import io.sluice.gateway.web.ContainerErrorsAsJson;
import io.sluice.gateway.web.StrictQueryParameters;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * The gateway's part of the management server: Boot loads this into the management context (its own
 * child context on management.server.port, or the application context when both share a port), through
 * {@code META-INF/spring/org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration.imports}.
 * It scans every {@link ManagementComponent} under {@code io.sluice.gateway} (controllers, the error
 * handler) and guards mutating calls with {@link ManagementAuthorizationFilter}.
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ComponentScan(
    basePackages = "io.sluice.gateway",
    useDefaultFilters = false,
    includeFilters = @ComponentScan.Filter(ManagementComponent.class))
public class ManagementWebConfiguration
{
    @Bean
    public FilterRegistrationBean<ManagementAuthorizationFilter> managementAuthorizationFilter(final Environment environment)
    {
        // On a dedicated management server every path is management; on a shared port only the actuator's.
        final String pathPrefix = ManagementPortType.get(environment) == ManagementPortType.DIFFERENT ?
            "" : trimTrailingSlash(environment.getProperty("management.endpoints.web.base-path", "/actuator"));
        final ManagementAuthorizationFilter filter = new ManagementAuthorizationFilter(
            environment.getProperty(ManagementAuthorizationFilter.TOKEN_SETTING), pathPrefix);
        final FilterRegistrationBean<ManagementAuthorizationFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setName("managementAuthorizationFilter");
        registration.addUrlPatterns("/*");
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 10);
        return registration;
    }

    /** Unknown query parameters are refused on the management port too (CONTRACT §3 "Errors"). */
    @Bean
    public FilterRegistrationBean<StrictQueryParameters> managementStrictQueryParameters(final Environment environment)
    {
        return StrictQueryParameters.registration("managementStrictQueryParameters", environment);
    }

    /** Tomcat's own errors on the management port as JSON, like on the client port. */
    @Bean
    public ContainerErrorsAsJson managementContainerErrorsAsJson()
    {
        return new ContainerErrorsAsJson();
    }

    private static String trimTrailingSlash(final String path)
    {
        return path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    }
}
