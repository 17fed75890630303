package io.sluice.cli;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code dist/bin/backup-hook.sh} from a copy in a temporary folder (so no built sluice.jar is
 * found beside it) with a {@code sluice} command of the test's choice first on PATH: a recording stub,
 * or the real CLI on this JVM's classpath. Reusable by qa tests.
 */
public final class BackupHook
{
    public static final Path SOURCE = locate();
    /**
     * Whether this JVM inherited SIGINT ignored, as everything started in the background by a non-interactive shell
     * (or under nohup) does; its children, the hook among them, would inherit that too.
     */
    private static final boolean SIGINT_IGNORED_HERE = ignoredSignals().testBit(2 - 1); // bit n-1 is signal n

    private final Path root;
    private final Path bin;
    private final Path path;
    private final Map<String, String> env = new HashMap<>();

    public BackupHook(final Path root) throws IOException
    {
        this.root = root;
        this.bin = Files.createDirectories(root.resolve("sluice/bin"));
        this.path = Files.createDirectories(root.resolve("path"));
        final Path hook = bin.resolve("backup-hook.sh");
        Files.copy(SOURCE, hook);
        executable(hook);
    }

    /** A {@code sluice} stub that appends its arguments to {@link #calls()} and exits as told by env. */
    public BackupHook withRecordingCli(final int pauseExit, final int resumeExit) throws IOException
    {
        final Path log = root.resolve("calls.log");
        env.put("FAKE_LOG", log.toString());
        writeCli(String.join("\n",
            "#!/usr/bin/env bash",
            "echo \"$*\" >> \"$FAKE_LOG\"",
            "case \"$3\" in",
            "  pause) exit " + pauseExit + " ;;",
            "  resume) exit " + resumeExit + " ;;",
            "esac",
            "exit 0",
            ""));
        return this;
    }

    /** A {@code sluice} that runs the real {@link AdminCli} on this JVM's classpath. */
    public BackupHook withRealCli() throws IOException
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        env.put("CLI_CLASSPATH", System.getProperty("java.class.path"));
        writeCli(String.join("\n",
            "#!/usr/bin/env bash",
            "shift",
            "exec '" + java + "' -XX:TieredStopAtLevel=1 -cp \"$CLI_CLASSPATH\" io.sluice.cli.AdminCli \"$@\"",
            ""));
        return this;
    }

    public BackupHook env(final String name, final String value)
    {
        env.put(name, value);
        return this;
    }

    public List<String> calls() throws IOException
    {
        final Path log = root.resolve("calls.log");
        return Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
    }

    public Process start(final String... args) throws IOException
    {
        final List<String> command = new ArrayList<>();
        if (SIGINT_IGNORED_HERE)
        {
            // A shell cannot trap a signal that was ignored when it started; the hook runs as from a terminal.
            command.addAll(List.of("env", "--default-signal=INT"));
        }
        command.add("bash");
        command.add(bin.resolve("backup-hook.sh").toString());
        command.addAll(List.of(args));
        final ProcessBuilder builder = new ProcessBuilder(command)
            .redirectOutput(root.resolve("hook.out").toFile())
            .redirectError(root.resolve("hook.err").toFile());
        builder.environment().remove("SLUICE_JAR");
        builder.environment().remove("SLUICE_GATEWAY");
        builder.environment().remove("SLUICE_TOKEN");
        builder.environment().putAll(env);
        builder.environment().put("PATH", path + ":" + builder.environment().getOrDefault("PATH", "/usr/bin:/bin"));
        return builder.start();
    }

    /** Runs the hook to its end (bounded) and returns its exit code. */
    public int run(final Duration timeout, final String... args) throws IOException, InterruptedException
    {
        final Process process = start(args);
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
        {
            process.destroyForcibly();
            throw new AssertionError("backup hook still running after " + timeout + "; stderr: " + err());
        }
        return process.exitValue();
    }

    public String out() throws IOException
    {
        final Path file = root.resolve("hook.out");
        return Files.exists(file) ? Files.readString(file) : "";
    }

    public String err() throws IOException
    {
        final Path file = root.resolve("hook.err");
        return Files.exists(file) ? Files.readString(file) : "";
    }

    public Path root()
    {
        return root;
    }

    private void writeCli(final String script) throws IOException
    {
        final Path cli = path.resolve("sluice");
        Files.writeString(cli, script, StandardCharsets.UTF_8);
        executable(cli);
    }

    private static void executable(final Path file) throws IOException
    {
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private static Path locate()
    {
        // Surefire runs in the module folder; an IDE may run at the repository root.
        for (final Path candidate : List.of(Path.of("bin/backup-hook.sh"), Path.of("dist/bin/backup-hook.sh")))
        {
            if (Files.isRegularFile(candidate))
            {
                return candidate.toAbsolutePath();
            }
        }
        throw new IllegalStateException("backup-hook.sh not found from " + Path.of("").toAbsolutePath());
    }

    /** The mask of signals this process ignores, from /proc (empty where there is none). */
    private static BigInteger ignoredSignals()
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/self/status")))
            {
                if (line.startsWith("SigIgn:"))
                {
                    return new BigInteger(line.substring("SigIgn:".length()).strip(), 16);
                }
            }
        }
        catch (final IOException e)
        {
            // not Linux: nothing known to be ignored
        }
        return BigInteger.ZERO;
    }
}
