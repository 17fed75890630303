package io.sluice.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.util.List;
import java.util.concurrent.Callable;

/**
 * A command that only groups others ({@code admin}, {@code admin exporting}, {@code admin backfill}):
 * run on its own it is refused (exit 3) with the names of its commands, taken from its
 * {@code subcommands} so the message cannot fall behind them.
 */
abstract class CommandGroup implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Override
    public Integer call()
    {
        // An alias (partitions, topology) maps to the same command line: name each command once.
        final List<String> names = spec.subcommands().values().stream()
            .map(CommandLine::getCommandName)
            .distinct()
            .toList();
        throw new CommandLine.ParameterException(spec.commandLine(), "choose a command: " + oneOf(names));
    }

    /** {@code a}, {@code a or b}, {@code a, b or c}. */
    private static String oneOf(final List<String> names)
    {
        if (names.size() < 2)
        {
            return String.join("", names);
        }
        return String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.get(names.size() - 1);
    }
}
