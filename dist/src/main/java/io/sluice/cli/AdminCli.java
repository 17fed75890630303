package io.sluice.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.lang.reflect.Constructor;

/**
 * {@code java -jar sluice.jar admin ...}: the operator CLI over the gateway's management API
 * (CONTRACT §6). Plain picocli and {@link java.net.http.HttpClient}: no Spring context, no scanning,
 * so it starts in well under a second.
 *
 * <p>{@link #run(String[])} never calls {@link System#exit}; the distribution's main does
 * {@code System.exit(AdminCli.run(rest))}. Exit codes are in {@link ExitCode}.
 */
public final class AdminCli
{
    private AdminCli()
    {
    }

    /** Runs the CLI on its own ({@code java -cp ... io.sluice.cli.AdminCli ...}); exits with its code. */
    public static void main(final String[] args)
    {
        System.exit(run(args));
    }

    /** Runs one admin command with the process's streams and environment; returns its exit code. */
    public static int run(final String[] args)
    {
        return run(args, CliConsole.system());
    }

    /** Runs one admin command against the given console (streams, environment, terminal or not). */
    public static int run(final String[] args, final CliConsole console)
    {
        return commandLine(console).execute(args);
    }

    /**
     * The configured picocli command line, for tools that want to parse without executing (the
     * Kubernetes manifest test checks the CronJob's arguments against it).
     */
    public static CommandLine commandLine(final CliConsole console)
    {
        final CommandLine cli = new CommandLine(AdminCommand.class, new ConsoleFactory(console));
        cli.setOut(new java.io.PrintWriter(console.out(), true));
        cli.setErr(new java.io.PrintWriter(console.err(), true));
        cli.setCaseInsensitiveEnumValuesAllowed(true);
        cli.setParameterExceptionHandler((ex, args) ->
        {
            console.err().println("admin: " + ex.getMessage());
            console.err().println(
                "usage: " + ex.getCommandLine().getCommandSpec().qualifiedName() + " --help for the options");
            return ExitCode.REFUSED;
        });
        cli.setExecutionExceptionHandler((ex, commandLine, parseResult) ->
        {
            if (ex instanceof CommandLine.TypeConversionException)
            {
                console.err().println("admin: " + ex.getMessage());
                return ExitCode.REFUSED;
            }
            if (ex instanceof GatewayUnreachableException)
            {
                console.err().println("admin: gateway unreachable: " + ex.getMessage()
                    + "; check --gateway (or SLUICE_GATEWAY) and that the gateway is running");
                return ExitCode.UNREACHABLE;
            }
            console.err().println("admin: " + commandLine.getCommandSpec().qualifiedName() + " failed: " + ex);
            return ExitCode.FAILED;
        });
        return cli;
    }

    @Command(
        name = "admin",
        mixinStandardHelpOptions = true,
        version = "sluice admin 0.1.0",
        description = "Operate a Sluice cluster through its gateway's management API.",
        subcommands = {ExportingCommands.class, BackfillCommands.class, PartitionsCommand.class, RebalanceCommand.class,
            ExportersCommand.class, BackupCommands.class},
        footer = {
            "",
            "Exit codes: 0 all succeeded; 1 some targets failed (503);",
            "  2 some timed out (504); 3 refused (bad arguments, 400, 401, 404, 409);",
            "  4 gateway unreachable."})
    static final class AdminCommand extends CommandGroup
    {
    }

    /** Builds commands, handing the console to those that take one. */
    private static final class ConsoleFactory implements CommandLine.IFactory
    {
        private final CliConsole console;
        private final CommandLine.IFactory fallback = CommandLine.defaultFactory();

        ConsoleFactory(final CliConsole console)
        {
            this.console = console;
        }

        @Override
        public <K> K create(final Class<K> type) throws Exception
        {
            for (final Constructor<?> constructor : type.getDeclaredConstructors())
            {
                final Class<?>[] parameters = constructor.getParameterTypes();
                if (parameters.length == 1 && parameters[0] == CliConsole.class)
                {
                    constructor.setAccessible(true);
                    return type.cast(constructor.newInstance(console));
                }
            }
            return fallback.create(type);
        }
    }
}
