package io.sluice.gateway.web;

import org.apache.catalina.core.StandardHost;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;

/**
 * Makes Tomcat answer its own errors with {@link JsonErrorReportValve}. A bean of the application context (client
 * port) and of the management context (management port): each server has its own factory and host.
 */
public final class ContainerErrorsAsJson implements WebServerFactoryCustomizer<TomcatServletWebServerFactory>
{
    @Override
    public void customize(final TomcatServletWebServerFactory factory)
    {
        factory.addContextCustomizers(context ->
        {
            if (context.getParent() instanceof StandardHost host)
            {
                host.setErrorReportValveClass(JsonErrorReportValve.class.getName());
            }
        });
    }
}
