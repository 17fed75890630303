package io.sluice.gateway.management;

import io.sluice.gateway.security.ManagementAuthorizationFilter;
import org.springframework.web.bind.annotation.RestController;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A REST controller served on the management server, beside the actuator endpoints, and nowhere else.
 * <p>
 * This is how the gateway adds management operations that must work with a plain {@code curl -X POST}
 * (an actuator {@code @WriteOperation} with a body parameter answers 415 without a JSON body): annotate a
 * controller in any package under {@code io.sluice.gateway} with this, and map it under
 * {@code ${management.endpoints.web.base-path:/actuator}/...}. It then gets the management port's bearer
 * token check ({@link ManagementAuthorizationFilter}) and JSON errors ({@link ManagementErrorHandler}).
 * Beans it depends on (services) live in the application context, which is the management context's parent.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@RestController
@ManagementComponent
public @interface ManagementController
{
}
