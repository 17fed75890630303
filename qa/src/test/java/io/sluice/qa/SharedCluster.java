package io.sluice.qa;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.SluiceCluster;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.api.parallel.ExecutionMode;
import tools.jackson.databind.JsonNode;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One cluster of the default layout (3 broker JVMs, 6 partitions, replication factor 3, one gateway JVM) shared by
 * every qa test class that registers this extension, instead of a cluster booted per class:
 * {@code @RegisterExtension static final SharedCluster SHARED = new SharedCluster();} and {@link #cluster()} in
 * {@code @BeforeAll} or a test.
 * <p>
 * It lives in the root context's store, so it boots for the first class that asks and stops when the run ends.
 * Before each class it is reset to a known state and checked, failing the class loudly when it cannot be: every
 * broker and the gateway running and reachable, every pair exporting, no pause lease, every partition led by its
 * preferred broker, everything written before exported and no backfill still running. A class may kill, SIGSTOP,
 * restart or wipe brokers, pause, or restart the gateway: the reset undoes it. Each class then sees only the export
 * lines written after its reset ({@link SluiceCluster#readExportsFromNow}) and writes its own record keys.
 * <p>
 * Its gateway settings are the union of what the sharing classes need: the token {@link #TOKEN} (the client sends
 * it; a class checking refusals sends none or another), the request timeout {@link #REQUEST_TIMEOUT} and the
 * idempotency window {@link #IDEMPOTENCY_WINDOW}. Classes that need another layout or other settings keep their own
 * cluster through {@code QaRun}.
 */
public final class SharedCluster
    implements BeforeAllCallback, AfterAllCallback, TestExecutionExceptionHandler, LifecycleMethodExecutionExceptionHandler
{
    public static final String TOKEN = "qa-shared-token";
    /** Short for fast 504s, long enough that a loaded 2-core machine answers the reachable pairs well before it. */
    public static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(4);
    /** Long enough for retries around a kill and restarts on a loaded machine (IdempotentAppendsIT waits it out). */
    public static final Duration IDEMPOTENCY_WINDOW = Duration.ofSeconds(150);
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(SharedCluster.class);
    private static final int TAIL_LINES = 40;
    private static final Duration RESET_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(90));

    /**
     * A sharing class that runs after the other sharing classes ({@link QaClassOrder}): one that needs time to have
     * passed since an earlier class, which the classes between then spend usefully.
     */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.TYPE)
    public @interface RunsLast
    {
    }

    /** Sharing classes of this run not finished yet, as {@link QaClassOrder} counted them; -1 when unknown. */
    private static final AtomicInteger CLASSES_LEFT = new AtomicInteger(-1);

    private Shared shared;

    /** Called by the class orderer: after that many sharing classes the cluster stops, sparing the 2 cores. */
    static void expectClasses(final int count)
    {
        CLASSES_LEFT.set(count);
    }

    @Override
    public void beforeAll(final ExtensionContext context)
    {
        if (context.getExecutionMode() == ExecutionMode.CONCURRENT)
        {
            // classes on the shared cluster take turns in the engine's thread (QaClassOrder); two at once would undo
            // each other's reset
            throw new IllegalStateException(context.getRequiredTestClass().getSimpleName() +
                " uses the shared cluster, so it must be @Execution(SAME_THREAD): classes are concurrent by default");
        }
        shared = context.getRoot().getStore(NAMESPACE).computeIfAbsent(Shared.class, key -> Shared.boot(), Shared.class);
        shared.resetFor(context.getRequiredTestClass().getSimpleName());
    }

    /**
     * Resets the cluster again, for a test that follows one of the same class which may have left it broken (the
     * reset before the class covers the first); returns it.
     */
    public SluiceCluster resetCluster(final String forWhat)
    {
        cluster().readWholeExports();
        shared.resetFor(forWhat);
        return shared.cluster;
    }

    /** The shared cluster, reset for this class. */
    public SluiceCluster cluster()
    {
        if (shared == null)
        {
            throw new IllegalStateException("SharedCluster must be registered as a static @RegisterExtension field");
        }
        return shared.cluster;
    }

    @Override
    public void afterAll(final ExtensionContext context)
    {
        if (shared == null)
        {
            return;
        }
        if (context.getExecutionException().isPresent())
        {
            shared.failed = true;
        }
        shared.cluster.readWholeExports();
        shared.cluster.log(context.getRequiredTestClass().getSimpleName() + " done with the shared cluster");
        if (CLASSES_LEFT.get() > 0 && CLASSES_LEFT.decrementAndGet() == 0)
        {
            // the classes after these boot their own clusters: this one would only take CPU from them
            shared.close();
        }
    }

    @Override
    public void handleTestExecutionException(final ExtensionContext context, final Throwable throwable) throws Throwable
    {
        throw withReport(context, throwable);
    }

    @Override
    public void handleBeforeAllMethodExecutionException(final ExtensionContext context, final Throwable throwable)
        throws Throwable
    {
        throw withReport(context, throwable);
    }

    @Override
    public void handleBeforeEachMethodExecutionException(final ExtensionContext context, final Throwable throwable)
        throws Throwable
    {
        throw withReport(context, throwable);
    }

    @Override
    public void handleAfterEachMethodExecutionException(final ExtensionContext context, final Throwable throwable)
        throws Throwable
    {
        throw withReport(context, throwable);
    }

    private Throwable withReport(final ExtensionContext context, final Throwable throwable)
    {
        if (shared != null)
        {
            shared.failed = true;
            final String report = context.getDisplayName() + " failed on the shared cluster; its logs are kept in " +
                shared.cluster.runDirectory() + System.lineSeparator() + shared.cluster.describe(TAIL_LINES);
            System.err.println("[sluice-qa] " + report);
            throwable.addSuppressed(new SharedClusterLogs(report));
        }
        return throwable;
    }

    /** The cluster in the root store: closed (every child killed) when the whole run ends. */
    private static final class Shared implements AutoCloseable
    {
        private final SluiceCluster cluster;
        private final Path directory;
        private volatile boolean failed;
        private boolean closed;

        private Shared(final SluiceCluster cluster, final Path directory)
        {
            this.cluster = cluster;
            this.directory = directory;
        }

        static Shared boot()
        {
            final Path root = Path.of(System.getProperty("sluice.qa.runs", "target/qa-runs")).toAbsolutePath();
            // one per fork when failsafe runs several
            final Path directory = root.resolve("SharedCluster" + System.getProperty("sluice.qa.fork", ""));
            SluiceCluster.deleteRecursively(directory);
            final SluiceCluster cluster = SluiceCluster.builder(directory.resolve("cluster"))
                .token(TOKEN)
                .requestTimeout(REQUEST_TIMEOUT)
                .gatewayProperty("sluice.records.idempotency-window", IDEMPOTENCY_WINDOW.toSeconds() + "s")
                .build();
            final long start = System.nanoTime();
            try
            {
                cluster.start();
                cluster.awaitReady();
                cluster.awaitLeaders();
            }
            catch (final RuntimeException | AssertionError ex)
            {
                final String report = cluster.describe(TAIL_LINES);
                cluster.close();
                throw new AssertionError("the shared cluster did not start: " + ex.getMessage() +
                    System.lineSeparator() + report, ex);
            }
            cluster.log("shared cluster booted in " + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms");
            return new Shared(cluster, directory);
        }

        /** Back to the known state, checked; then the class reads only the exports written from here on. */
        void resetFor(final String testClass)
        {
            if (closed)
            {
                throw new IllegalStateException("the shared cluster was stopped after the sharing classes QaClassOrder " +
                    "counted; " + testClass + " came later (is it in QaClassOrder's count?)");
            }
            final long start = System.nanoTime();
            try
            {
                if (cluster.gateway().isSuspended())
                {
                    cluster.gateway().resume();
                }
                if (!cluster.gateway().isAlive())
                {
                    cluster.startGateway();
                }
                Exporting.everyBrokerUpAndExporting(cluster);
                cluster.awaitPreferredLeaders();
                awaitEverythingExported();
                awaitNoBackfillRunning();
                verify();
            }
            catch (final RuntimeException | AssertionError ex)
            {
                failed = true;
                throw new AssertionError("the shared cluster could not be reset for " + testClass + ": " +
                    ex.getMessage() + System.lineSeparator() + cluster.describe(TAIL_LINES), ex);
            }
            cluster.readExportsFromNow();
            cluster.log("reset for " + testClass + " in " + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms");
        }

        /** Each leader has exported (and acknowledged) up to its last position: nothing of an earlier class in flight. */
        private void awaitEverythingExported()
        {
            Await.until("every partition's leader exported up to its last position", RESET_TIMEOUT, () ->
            {
                final JsonNode status = cluster.client().exporting().http().json();
                for (final JsonNode pair : status.path("targets"))
                {
                    if ("LEADER".equals(pair.path("role").asString("")) &&
                        pair.path("exportedPosition").asLong(0) < pair.path("lastPosition").asLong(0))
                    {
                        return false;
                    }
                }
                return true;
            });
        }

        private void awaitNoBackfillRunning()
        {
            Await.until("no backfill pending or running", RESET_TIMEOUT, () ->
            {
                final JsonNode list = cluster.client().get("/actuator/backfills").json();
                for (final JsonNode backfill : list.path("backfills"))
                {
                    final String state = backfill.path("state").asString("");
                    if (state.equals("RUNNING") || state.equals("PENDING"))
                    {
                        return false;
                    }
                }
                return list.path("unavailablePartitions").isEmpty();
            });
        }

        /** What every sharing class may rely on; fails naming what is off. */
        private void verify()
        {
            final List<String> off = new ArrayList<>();
            for (int id = 0; id < cluster.brokerCount(); id++)
            {
                if (!cluster.isBrokerRunning(id))
                {
                    off.add("broker " + id + " not running");
                }
            }
            if (!cluster.gateway().isAlive() || !cluster.client().isReady())
            {
                off.add("gateway not ready");
            }
            final JsonNode status = cluster.client().exporting().http().json();
            if (!"EXPORTING".equals(status.path("state").asString("")))
            {
                off.add("cluster state " + status.path("state"));
            }
            if (status.path("targets").size() != cluster.allPairs().size())
            {
                off.add(status.path("targets").size() + " pairs listed, not " + cluster.allPairs().size());
            }
            for (final JsonNode pair : status.path("targets"))
            {
                if (!"EXPORTING".equals(pair.path("state").asString("")))
                {
                    off.add("pair " + pair + " not exporting");
                }
                if (!pair.path("expiresAt").isNull() && !pair.path("expiresAt").isMissingNode())
                {
                    off.add("pair " + pair + " under a lease");
                }
            }
            if (!cluster.client().preferredBrokersLead())
            {
                off.add("a partition not led by its preferred broker");
            }
            if (!off.isEmpty())
            {
                throw new AssertionError("after the reset: " + off);
            }
        }

        @Override
        public synchronized void close()
        {
            if (closed)
            {
                return;
            }
            closed = true;
            cluster.close();
            if (failed)
            {
                System.err.println("[sluice-qa] a class failed on the shared cluster; logs and data kept in " + directory);
            }
            else
            {
                SluiceCluster.deleteRecursively(directory);
            }
        }
    }

    /** Carries the shared cluster's children's state and log tails into the failure report. */
    static final class SharedClusterLogs extends RuntimeException
    {
        SharedClusterLogs(final String report)
        {
            super(report, null, false, false);
        }
    }
}
