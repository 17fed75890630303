package io.sluice.qa;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A qa class with a cluster of its own that takes a minute or more: {@link QaClassOrder} starts such classes first,
 * longest first, so that the qa run does not end with one long class running alone while the other lanes idle.
 * Only the order depends on it; a figure that drifts makes the run a little longer, never wrong.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface LongRunning
{
    /** About how long the class runs in CI, in seconds (the failsafe report's time). */
    int seconds();
}
