package io.sluice.gateway.management;

import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Registers {@link ManagementTypeExcludeFilter} before the application's component scan runs; Boot's
 * {@code TypeExcludeFilter} in {@code @SpringBootApplication} consults every such bean. Listed in
 * {@code META-INF/spring.factories}.
 */
public final class ManagementTypeExcludeFilterInitializer
    implements ApplicationContextInitializer<ConfigurableApplicationContext>
{
    static final String BEAN_NAME = "io.sluice.gateway.management.managementTypeExcludeFilter";

    @Override
    public void initialize(final ConfigurableApplicationContext context)
    {
        if (!context.getBeanFactory().containsSingleton(BEAN_NAME))
        {
            context.getBeanFactory().registerSingleton(BEAN_NAME, new ManagementTypeExcludeFilter());
        }
    }
}
