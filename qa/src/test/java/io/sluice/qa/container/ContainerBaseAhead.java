package io.sluice.qa.container;

import org.junit.platform.engine.TestDescriptor;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Builds the JRE base image of {@link ContainerClusterIT} on a thread of its own as soon as a test plan that holds
 * that class starts, so that its debootstrap and package install (~40 s on a machine that never built it) run while
 * the cluster classes run, not in the isolated class's own time, when nothing else may run beside it. Registered
 * through {@code META-INF/services}; a plan without the class (unit tests, one other IT) starts nothing.
 * <p>
 * Only the base is built ahead: it is a chroot and an import, no container runs, so it cannot disturb a cluster
 * beside it the way the container cluster would.
 */
public final class ContainerBaseAhead implements TestExecutionListener
{
    private static final Object LOCK = new Object();
    /** The base's build timings (empty when podman had it already), or null when nothing was started ahead. */
    private static CompletableFuture<Optional<String>> build;

    @Override
    public void testPlanExecutionStarted(final TestPlan plan)
    {
        if (!holdsContainerClusterIt(plan))
        {
            return;
        }
        final Path target = Path.of(System.getProperty("sluice.qa.runs", "target/qa-runs")).toAbsolutePath().getParent();
        final Podman podman = new Podman(target.resolve("container-base-podman"));
        final ContainerImages images = new ContainerImages(podman, target.resolve("container-base"));
        // Where the base cannot be built, the class itself says why (skipped, or failed in CI).
        if (podman.whyUnusable().or(images::whyBaseCannotBeBuilt).isPresent() || images.exists(ContainerImages.BASE_IMAGE))
        {
            return;
        }
        synchronized (LOCK)
        {
            build = new CompletableFuture<>();
            final CompletableFuture<Optional<String>> started = build;
            final Thread thread = new Thread(() ->
            {
                try
                {
                    images.ensureBase();
                    started.complete(images.baseTimings().map(timings -> timings + ", built ahead"));
                }
                catch (final RuntimeException | Error e)
                {
                    started.completeExceptionally(e);
                }
            }, "qa-container-base-ahead");
            thread.setDaemon(true);
            thread.start();
        }
    }

    /**
     * Ensures the base image exists: waits for the build started ahead, if any, else builds it with {@code images};
     * returns what building it cost, empty when it was in podman's storage already.
     */
    static Optional<String> ensureBase(final ContainerImages images)
    {
        final CompletableFuture<Optional<String>> ahead;
        synchronized (LOCK)
        {
            ahead = build;
        }
        if (ahead != null)
        {
            try
            {
                return ahead.join();
            }
            catch (final CompletionException e)
            {
                throw new AssertionError("building the base image ahead failed: " + e.getCause(), e.getCause());
            }
        }
        images.ensureBase();
        return images.baseTimings();
    }

    private static boolean holdsContainerClusterIt(final TestPlan plan)
    {
        for (final TestIdentifier root : plan.getRoots())
        {
            for (final TestIdentifier child : plan.getChildren(root))
            {
                if (child.getType() == TestDescriptor.Type.CONTAINER && child.getSource().orElse(null) instanceof
                    ClassSource source && source.getClassName().equals(ContainerClusterIT.class.getName()))
                {
                    return true;
                }
            }
        }
        return false;
    }
}
