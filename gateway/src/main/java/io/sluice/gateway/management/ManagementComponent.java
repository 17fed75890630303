package io.sluice.gateway.management;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a component that belongs to the management server only (management.server.port), never to the
 * client API: {@link ManagementTypeExcludeFilter} keeps it out of the application's component scan and
 * {@link ManagementWebConfiguration} scans it into the management context. Controllers use
 * {@link ManagementController}, which carries this mark.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface ManagementComponent
{
}
