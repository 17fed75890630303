package io.sluice.qa;

import org.junit.jupiter.api.ClassDescriptor;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.ClassOrdererContext;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Comparator;

/**
 * The order of the qa classes (junit-platform.properties names it): the classes on the {@link SharedCluster} first,
 * one after another on the one cluster (those marked {@link SharedCluster.RunsLast} after the rest of them), then the
 * classes with clusters of their own, the {@link LongRunning} ones first, longest first; by name within each group.
 * It tells the shared cluster how many classes use it, so it stops after the last one instead of idling beside the
 * clusters booted later.
 * <p>
 * With the two lanes of junit-platform.properties: the shared-cluster classes are {@code @Execution(SAME_THREAD)}
 * and run one after another in the engine's thread, in this order; every other class has a cluster of its own, is
 * concurrent by default and runs on one more thread beside them, so the 2 cores serve two clusters at once
 * instead of one cluster that mostly waits. A shared-cluster class left concurrent would run beside another one on the same
 * cluster: {@link SharedCluster} refuses it.
 */
public final class QaClassOrder implements ClassOrderer
{
    /**
     * The lock of the concurrent classes that start an OpenSearch node or a Kafka broker inside the test JVM: those
     * keep JVM-wide state (Netty's processor count, metrics registries), so only one such class runs at a time.
     */
    public static final String EMBEDDED_SINKS = "sluice-qa-embedded-sinks";

    @Override
    public void orderClasses(final ClassOrdererContext context)
    {
        context.getClassDescriptors().sort(Comparator
            .comparing((ClassDescriptor descriptor) -> group(descriptor.getTestClass()))
            .thenComparing(descriptor -> -expectedSeconds(descriptor.getTestClass()))
            .thenComparing(descriptor -> descriptor.getTestClass().getName()));
        SharedCluster.expectClasses((int)context.getClassDescriptors().stream()
            .filter(descriptor -> usesSharedCluster(descriptor.getTestClass())).count());
    }

    /** 0: on the shared cluster; 1: on it, after the others ({@link SharedCluster.RunsLast}); 2: a cluster of its own. */
    private static int group(final Class<?> testClass)
    {
        if (!usesSharedCluster(testClass))
        {
            return 2;
        }
        return testClass.isAnnotationPresent(SharedCluster.RunsLast.class) ? 1 : 0;
    }

    /** {@link LongRunning#seconds()} of a class with a cluster of its own, else 0 (the shared lane keeps its order). */
    private static int expectedSeconds(final Class<?> testClass)
    {
        final LongRunning longRunning = testClass.getAnnotation(LongRunning.class);
        return longRunning == null || usesSharedCluster(testClass) ? 0 : longRunning.seconds();
    }

    static boolean usesSharedCluster(final Class<?> testClass)
    {
        for (final Field field : testClass.getDeclaredFields())
        {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == SharedCluster.class)
            {
                return true;
            }
        }
        return false;
    }
}
