package io.sluice.qa.operator;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.SluiceCluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code java -jar sluice.jar admin ...} as its own process, the way an operator or a script runs it. Its
 * stdout and stderr go to numbered files under {@code <folder>/} (kept with the run when a test fails), and
 * {@code SLUICE_GATEWAY} / {@code SLUICE_TOKEN} are removed from its environment so only the arguments count.
 * Not thread-safe: one test thread starts the calls.
 */
final class AdminCliProcess
{
    /** The CLI is a short-lived JVM: C1 and the serial GC start it fastest (as backup-hook.sh does). */
    static final List<String> JVM_OPTIONS = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m");
    static final Duration CALL_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(120));

    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    /** CLIs still running when the test JVM exits (a failed or timed-out test) are killed with it. */
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static
    {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly), "admin-cli-kill"));
    }

    private final Path folder;
    private final List<String> args;
    private final Path stdoutFile;
    private final Path stderrFile;
    private final long startNanos;
    private final Process process;

    private AdminCliProcess(final Path folder, final List<String> args)
    {
        this.folder = folder;
        this.args = List.copyOf(args);
        final String name = String.format("%03d-%s", SEQUENCE.incrementAndGet(), String.join("-", firstWords(args)));
        this.stdoutFile = folder.resolve(name + ".stdout");
        this.stderrFile = folder.resolve(name + ".stderr");
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JVM_OPTIONS);
        command.add("-jar");
        command.add(SluiceCluster.jar().toString());
        command.add("admin");
        command.addAll(args);
        try
        {
            Files.createDirectories(folder);
            final ProcessBuilder builder = new ProcessBuilder(command)
                .directory(folder.toFile())
                .redirectOutput(stdoutFile.toFile())
                .redirectError(stderrFile.toFile());
            builder.environment().remove("SLUICE_GATEWAY");
            builder.environment().remove("SLUICE_TOKEN");
            this.startNanos = System.nanoTime();
            this.process = builder.start();
            LIVE.add(process);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot start " + String.join(" ", command), ex);
        }
    }

    /** Starts {@code admin args...} and returns at once. */
    static AdminCliProcess start(final Path folder, final String... args)
    {
        return new AdminCliProcess(folder, List.of(args));
    }

    /** Runs {@code admin args...} to its end (at most {@link #CALL_TIMEOUT}). */
    static CliResult run(final Path folder, final String... args)
    {
        return start(folder, args).awaitExit(CALL_TIMEOUT);
    }

    /** Waits (bounded) until the CLI has written {@code text} to stderr; fails if it exits first without it. */
    void awaitStderrContains(final String text, final Duration timeout)
    {
        Await.until("admin " + String.join(" ", args) + " printing '" + text + "' on stderr", timeout, () ->
        {
            if (read(stderrFile).contains(text))
            {
                return true;
            }
            if (!process.isAlive())
            {
                throw new AssertionError("admin " + String.join(" ", args) + " exited " + process.exitValue() +
                    " without printing '" + text + "'; stdout: " + read(stdoutFile) + " stderr: " + read(stderrFile));
            }
            return false;
        });
    }

    /** Waits for the exit; kills the CLI and fails when it runs longer than {@code timeout}. */
    CliResult awaitExit(final Duration timeout)
    {
        try
        {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
            {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
                LIVE.remove(process);
                throw new AssertionError("admin " + String.join(" ", args) + " still running after " + timeout +
                    "; stdout: " + read(stdoutFile) + " stderr: " + read(stderrFile));
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            LIVE.remove(process);
            throw new IllegalStateException("interrupted waiting for admin " + String.join(" ", args), ex);
        }
        LIVE.remove(process);
        return new CliResult(args, process.exitValue(), read(stdoutFile), read(stderrFile),
            Duration.ofNanos(System.nanoTime() - startNanos));
    }

    Path folder()
    {
        return folder;
    }

    private static List<String> firstWords(final List<String> args)
    {
        final List<String> words = new ArrayList<>();
        for (final String arg : args)
        {
            if (arg.startsWith("-") || words.size() == 3)
            {
                break;
            }
            words.add(arg.replaceAll("[^A-Za-z0-9]", "_"));
        }
        return words;
    }

    private static String read(final Path file)
    {
        try
        {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read " + file, ex);
        }
    }
}
