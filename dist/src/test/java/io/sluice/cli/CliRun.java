package io.sluice.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Runs the admin CLI in-process with captured streams, a given environment, and a sleeper that
 * records the waits it was asked for instead of waiting (so backoff is checked, not slept).
 */
public record CliRun(int exitCode, String out, String err, List<Duration> sleeps)
{
    public static CliRun run(final String... args)
    {
        return run(Map.of(), false, args);
    }

    public static CliRun run(final Map<String, String> env, final boolean interactive, final String... args)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final List<Duration> sleeps = new ArrayList<>();
        final long[] fakeNanos = {0};
        final CliConsole console = new CliConsole(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            env::get,
            interactive,
            duration ->
            {
                sleeps.add(duration);
                fakeNanos[0] += duration.toNanos();
            },
            () -> fakeNanos[0]);
        final int exitCode = AdminCli.run(args, console);
        return new CliRun(
            exitCode, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8), List.copyOf(sleeps));
    }
}
