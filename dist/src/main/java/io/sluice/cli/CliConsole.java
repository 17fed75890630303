package io.sluice.cli;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;

/**
 * Everything the CLI takes from its process: streams, environment, whether stdout is a terminal, and
 * how it sleeps and reads time. Tests pass their own to run the CLI in-process.
 */
public record CliConsole(
    PrintStream out,
    PrintStream err,
    Function<String, String> env,
    boolean interactive,
    Sleeper sleeper,
    NanoClock clock)
{
    /** Sleeps between retry rounds and watch polls; interruptible. */
    @FunctionalInterface
    public interface Sleeper
    {
        void sleep(Duration duration) throws InterruptedException;
    }

    @FunctionalInterface
    public interface NanoClock
    {
        long nanoTime();
    }

    /** The real process: System streams and environment, a terminal when the JVM has a console. */
    public static CliConsole system()
    {
        return new CliConsole(
            System.out,
            System.err,
            System::getenv,
            System.console() != null,
            duration -> Thread.sleep(duration.toMillis()),
            System::nanoTime);
    }

    /** For tests: given streams and environment, not a terminal, real sleeps. */
    public static CliConsole of(final PrintStream out, final PrintStream err, final Map<String, String> env)
    {
        return new CliConsole(
            out, err, env::get, false, duration -> Thread.sleep(duration.toMillis()), System::nanoTime);
    }

    public CliConsole withInteractive(final boolean interactive)
    {
        return new CliConsole(out, err, env, interactive, sleeper, clock);
    }
}
