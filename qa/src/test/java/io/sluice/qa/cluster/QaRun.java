package io.sluice.qa.cluster;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * The folder, clusters and processes of one qa test class, as a JUnit extension:
 * {@code @RegisterExtension static final QaRun RUN = new QaRun();}.
 * <p>
 * Each class runs in {@code qa/target/qa-runs/<TestClass>/} (system property {@code sluice.qa.runs}). When a
 * test or a lifecycle method fails, the failure gets each child's state and log tail attached (so it shows in
 * the surefire report) and the folder is kept; when the whole class passed, the folder is deleted to save
 * disk (unless {@code -Dsluice.qa.keep-runs=true}, to read a green run's logs). Every cluster and process made
 * through this run is killed after the class, whatever happened.
 */
public final class QaRun
    implements BeforeAllCallback, AfterAllCallback, TestExecutionExceptionHandler, LifecycleMethodExecutionExceptionHandler
{
    private static final int TAIL_LINES = 40;

    private final List<SluiceCluster> clusters = new ArrayList<>();
    private final List<SluiceProcess> processes = new ArrayList<>();
    private Path directory;
    private boolean failed;

    @Override
    public void beforeAll(final ExtensionContext context)
    {
        final Path root = Path.of(System.getProperty("sluice.qa.runs", "target/qa-runs")).toAbsolutePath();
        directory = root.resolve(context.getRequiredTestClass().getSimpleName());
        killLeftovers(directory);
        SluiceCluster.deleteRecursively(directory);
        try
        {
            Files.createDirectories(directory);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create " + directory, ex);
        }
    }

    /** A cluster in {@code <run>/<name>/}, configured by {@code config}, built (not started) and registered. */
    public SluiceCluster cluster(final String name, final Consumer<SluiceCluster.Builder> config)
    {
        final SluiceCluster.Builder builder = SluiceCluster.builder(directory().resolve(name));
        config.accept(builder);
        final SluiceCluster cluster = builder.build();
        clusters.add(cluster);
        return cluster;
    }

    /** A lone {@code sluice.jar MODE args} process with its log in {@code <run>/<name>/<name>.log}, registered. */
    public SluiceProcess process(
        final String name, final String mode, final List<String> args, final Path workingDirectory,
        final String... extraJvmOptions)
    {
        return process(name, mode, args, java.util.Map.of(), workingDirectory, extraJvmOptions);
    }

    /** As {@link #process(String, String, List, Path, String...)}, with {@code environment} set on the child. */
    public SluiceProcess process(
        final String name, final String mode, final List<String> args, final java.util.Map<String, String> environment,
        final Path workingDirectory, final String... extraJvmOptions)
    {
        final Path folder = directory().resolve(name);
        // the folder in the command line lets a later run recognise and kill this child if this run crashes
        final List<String> jvmOptions = new ArrayList<>(SluiceCluster.configuredJvmOptions());
        jvmOptions.addAll(List.of(extraJvmOptions));
        jvmOptions.add("-Dsluice.qa.run=" + folder);
        final SluiceProcess process = new SluiceProcess(name,
            SluiceProcess.javaCommand(SluiceCluster.jar(), jvmOptions, mode, args),
            workingDirectory, folder.resolve(name + ".log"), folder.resolve("pids"), environment);
        processes.add(process);
        return process;
    }

    public Path directory()
    {
        if (directory == null)
        {
            throw new IllegalStateException("QaRun must be registered as a static @RegisterExtension field");
        }
        return directory;
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

    @Override
    public void afterAll(final ExtensionContext context)
    {
        if (context.getExecutionException().isPresent())
        {
            failed = true;
        }
        for (final SluiceCluster cluster : clusters)
        {
            cluster.close();
        }
        for (final SluiceProcess process : processes)
        {
            process.kill();
        }
        if (failed)
        {
            System.err.println("[sluice-qa] " + context.getDisplayName() + " failed; logs and data kept in " + directory);
        }
        else if (!Boolean.getBoolean("sluice.qa.keep-runs"))
        {
            SluiceCluster.deleteRecursively(directory);
        }
    }

    private Throwable withReport(final ExtensionContext context, final Throwable throwable)
    {
        failed = true;
        final StringBuilder report = new StringBuilder()
            .append(context.getDisplayName()).append(" failed; logs and data kept in ").append(directory)
            .append(System.lineSeparator());
        for (final SluiceCluster cluster : clusters)
        {
            report.append(cluster.describe(TAIL_LINES));
        }
        for (final SluiceProcess process : processes)
        {
            report.append("----- ").append(process.name()).append(", log ").append(process.logFile())
                .append(System.lineSeparator()).append(process.logTail(TAIL_LINES)).append(System.lineSeparator());
        }
        System.err.println("[sluice-qa] " + report);
        throwable.addSuppressed(new ChildLogs(report.toString()));
        return throwable;
    }

    private static void killLeftovers(final Path directory)
    {
        if (!Files.isDirectory(directory))
        {
            return;
        }
        try (Stream<Path> files = Files.walk(directory, 3))
        {
            files.filter(file -> file.getFileName().toString().equals("pids"))
                .forEach(pidFile -> SluiceProcess.killLeftovers(pidFile, pidFile.getParent()));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot look for leftover children in " + directory, ex);
        }
    }

    /** Carries the children's state and log tails into the failure report. */
    static final class ChildLogs extends RuntimeException
    {
        ChildLogs(final String report)
        {
            super(report, null, false, false);
        }
    }
}
