package io.sluice.qa.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One child JVM running {@code sluice.jar} in some mode, its stdout and stderr appended to one log file.
 * <p>
 * Every started process is registered for a JVM shutdown hook that kills it, and its pid is appended to
 * {@code <runDirectory>/pids} so a later run over the same folder can kill what a crashed run left behind.
 * Not thread-safe: one test thread drives a process.
 */
public final class SluiceProcess
{
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();
    private static final Duration SIGNAL_TIMEOUT = Duration.ofSeconds(10);

    static
    {
        Runtime.getRuntime().addShutdownHook(new Thread(SluiceProcess::killAllLive, "sluice-qa-kill-children"));
    }

    private final String name;
    private final List<String> command;
    private final Path workingDirectory;
    private final Path logFile;
    private final Path pidFile;
    /** Set on the child's environment on top of this JVM's. */
    private final java.util.Map<String, String> environment;
    private Process process;
    private boolean suspended;
    private boolean stoppedOnPurpose;

    public SluiceProcess(
        final String name,
        final List<String> command,
        final Path workingDirectory,
        final Path logFile,
        final Path pidFile)
    {
        this(name, command, workingDirectory, logFile, pidFile, java.util.Map.of());
    }

    /** A process whose environment also holds {@code environment}: settings given as environment variables. */
    public SluiceProcess(
        final String name,
        final List<String> command,
        final Path workingDirectory,
        final Path logFile,
        final Path pidFile,
        final java.util.Map<String, String> environment)
    {
        this.environment = java.util.Map.copyOf(environment);
        this.name = name;
        this.command = List.copyOf(command);
        this.workingDirectory = workingDirectory;
        this.logFile = logFile;
        this.pidFile = pidFile;
    }

    /**
     * The {@code java} command line for {@code sluice.jar MODE args...} with the given JVM options, started from the
     * jar's class data sharing archive ({@link ClassDataSharing}).
     */
    public static List<String> javaCommand(
        final Path jar, final List<String> jvmOptions, final String mode, final List<String> args)
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        final ClassDataSharing.Launch launch = ClassDataSharing.launchOf(jar);
        command.addAll(launch.jvmOptions());
        command.add("-jar");
        command.add(launch.jar().toString());
        if (mode != null)
        {
            command.add(mode);
        }
        command.addAll(args);
        return command;
    }

    public String name()
    {
        return name;
    }

    public Path logFile()
    {
        return logFile;
    }

    public List<String> command()
    {
        return command;
    }

    /** Starts the process; its log gets a marker line so restarts can be told apart. */
    public synchronized void start()
    {
        if (isAlive())
        {
            throw new IllegalStateException(name + " is already running as pid " + process.pid());
        }
        try
        {
            Files.createDirectories(logFile.getParent());
            Files.createDirectories(workingDirectory);
            Files.writeString(logFile, "===== " + Instant.now() + " starting " + name + ": " +
                String.join(" ", command) + System.lineSeparator(), StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            final ProcessBuilder builder = new ProcessBuilder(command)
                .directory(workingDirectory.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
            builder.environment().putAll(environment);
            process = builder.start();
            suspended = false;
            stoppedOnPurpose = false;
            LIVE.add(process);
            if (pidFile != null)
            {
                Files.writeString(pidFile, process.pid() + " " + name + System.lineSeparator(), StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot start " + name + ": " + String.join(" ", command), ex);
        }
    }

    public synchronized boolean isAlive()
    {
        return process != null && process.isAlive();
    }

    public synchronized boolean isSuspended()
    {
        return suspended && isAlive();
    }

    public synchronized long pid()
    {
        if (process == null)
        {
            throw new IllegalStateException(name + " was never started");
        }
        return process.pid();
    }

    /**
     * Writes the running process's threads ({@code jcmd <pid> Thread.print}) next to its log, so a red run shows
     * where a child that stopped making progress waits. Returns the file, or empty when the process is not running
     * (or SIGSTOPped: it could not answer) or the dump failed.
     */
    public synchronized Optional<Path> dumpThreads()
    {
        if (!isAlive() || suspended)
        {
            return Optional.empty();
        }
        final Path dump = logFile.resolveSibling(name + "-threads-" + process.pid() + "-" + System.currentTimeMillis() + ".txt");
        try
        {
            final Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(process.pid()), "Thread.print", "-l")
                .redirectErrorStream(true).redirectOutput(dump.toFile()).start();
            if (!jcmd.waitFor(SIGNAL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
            {
                jcmd.destroyForcibly();
                return Optional.empty();
            }
            return jcmd.exitValue() == 0 ? Optional.of(dump) : Optional.empty();
        }
        catch (final IOException ex)
        {
            return Optional.empty();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** SIGKILL, then waits (bounded) until the process is gone. */
    public synchronized void kill()
    {
        if (process == null)
        {
            return;
        }
        stoppedOnPurpose = true;
        process.destroyForcibly();
        awaitExit(SIGNAL_TIMEOUT);
        suspended = false;
        LIVE.remove(process);
    }

    /** SIGTERM and a bounded wait for a graceful exit; SIGKILL if it does not come. Returns the exit code. */
    public synchronized int stop(final Duration gracePeriod)
    {
        if (process == null)
        {
            throw new IllegalStateException(name + " was never started");
        }
        if (suspended)
        {
            resume();
        }
        stoppedOnPurpose = true;
        process.destroy();
        if (!awaitExit(gracePeriod))
        {
            appendToLog("===== " + name + " did not stop within " + gracePeriod + " of SIGTERM; killing it");
            kill();
        }
        LIVE.remove(process);
        return process.exitValue();
    }

    /** Whether the last exit was asked for by {@link #kill()} or {@link #stop}. */
    public synchronized boolean wasKilledOnPurpose()
    {
        return stoppedOnPurpose;
    }

    /**
     * SIGSTOP: the process keeps its sockets open but answers nothing. Returns once the kernel shows it
     * stopped, because delivery is asynchronous and a caller that measures "no answer" must not race it.
     */
    public synchronized void suspend()
    {
        signal("STOP");
        suspended = true;
        awaitState(true, "STOP");
    }

    /** SIGCONT; returns once the kernel no longer shows the process stopped. */
    public synchronized void resume()
    {
        signal("CONT");
        suspended = false;
        awaitState(false, "CONT");
    }

    /**
     * Polls {@code /proc/<pid>/stat} until the process is (or is no longer) in the stopped state.
     * Where there is no {@code /proc} the signal having been sent is all we can know.
     */
    private void awaitState(final boolean stopped, final String signal)
    {
        final Path stat = Path.of("/proc", Long.toString(process.pid()), "stat");
        if (!Files.exists(stat))
        {
            return;
        }
        final long deadline = System.nanoTime() + SIGNAL_TIMEOUT.toNanos();
        while (isStopped(stat) != stopped)
        {
            if (!isAlive())
            {
                throw new IllegalStateException(name + " exited while waiting for SIG" + signal + " to take effect");
            }
            if (System.nanoTime() - deadline > 0)
            {
                throw new IllegalStateException("SIG" + signal + " sent to " + name + " (pid " + process.pid() +
                    ") but it is still " + (stopped ? "running" : "stopped") + " after " + SIGNAL_TIMEOUT);
            }
            try
            {
                Thread.sleep(1);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for SIG" + signal + " on " + name, ex);
            }
        }
    }

    private static boolean isStopped(final Path stat)
    {
        // T is "stopped by a signal"
        return processState(stat) == 'T';
    }

    /**
     * The state letter of {@code /proc/<pid>/stat} ("pid (comm) S ..."; it follows the last closing parenthesis,
     * as comm may hold one), or '?' when the file cannot be read.
     */
    static char processState(final Path stat)
    {
        try
        {
            final String line = Files.readString(stat);
            return line.charAt(line.lastIndexOf(')') + 2);
        }
        catch (final IOException ex)
        {
            return '?';
        }
    }

    /** Waits at most {@code timeout} for the process to exit; true if it has. */
    public boolean awaitExit(final Duration timeout)
    {
        final Process current;
        synchronized (this)
        {
            current = process;
        }
        if (current == null)
        {
            return true;
        }
        try
        {
            return current.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Exit code, if the process has exited. */
    public synchronized Optional<Integer> exitCode()
    {
        if (process == null || process.isAlive())
        {
            return Optional.empty();
        }
        return Optional.of(process.exitValue());
    }

    /** The last {@code lines} lines of the log. */
    public String logTail(final int lines)
    {
        return LogFiles.tail(logFile, lines);
    }

    /** The whole log as text (for asserting on a line the process printed). */
    public String log()
    {
        return LogFiles.read(logFile);
    }

    /**
     * The log from the start marker of the latest start on: what the current (or last stopped) run printed, without
     * the earlier runs' lines of a process restarted many times (a shared cluster's brokers).
     */
    public String logOfLatestRun()
    {
        final String log = log();
        final int marker = log.lastIndexOf(" starting " + name + ": ");
        if (marker < 0)
        {
            return log;
        }
        final int lineStart = log.lastIndexOf('\n', marker);
        return log.substring(lineStart + 1);
    }

    void appendToLog(final String line)
    {
        try
        {
            Files.writeString(logFile, line + System.lineSeparator(), StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
        catch (final IOException ignore)
        {
            // the marker only helps reading the log; the process state is what matters
        }
    }

    private void signal(final String signal)
    {
        if (!isAlive())
        {
            throw new IllegalStateException(name + " is not running; cannot send SIG" + signal);
        }
        try
        {
            final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                .redirectErrorStream(true)
                .start();
            if (!kill.waitFor(SIGNAL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS) || kill.exitValue() != 0)
            {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " (" + name + ") failed: " +
                    new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            }
            appendToLog("===== " + Instant.now() + " sent SIG" + signal + " to " + name);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("kill -" + signal + " " + process.pid() + " (" + name + ")", ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending SIG" + signal + " to " + name, ex);
        }
    }

    /**
     * Kills processes a previous, crashed run over the same folder left behind: only pids listed in its
     * pid file whose command line still names that folder, so an unrelated process that reused a pid is
     * left alone.
     */
    public static void killLeftovers(final Path pidFile, final Path runDirectory)
    {
        if (!Files.exists(pidFile))
        {
            return;
        }
        final String marker = runDirectory.toAbsolutePath().toString();
        for (final String line : LogFiles.read(pidFile).split("\\R"))
        {
            final String[] parts = line.trim().split(" ", 2);
            if (parts.length == 0 || parts[0].isEmpty())
            {
                continue;
            }
            final long pid;
            try
            {
                pid = Long.parseLong(parts[0]);
            }
            catch (final NumberFormatException ex)
            {
                continue;
            }
            ProcessHandle.of(pid)
                .filter(handle -> handle.info().commandLine().map(cmd -> cmd.contains(marker)).orElse(false))
                .ifPresent(handle ->
                {
                    System.err.println("[sluice-qa] killing leftover child pid " + pid + " of an earlier run in " + marker);
                    handle.destroyForcibly();
                });
        }
    }

    private static void killAllLive()
    {
        for (final Process process : LIVE)
        {
            process.destroyForcibly();
        }
    }
}
