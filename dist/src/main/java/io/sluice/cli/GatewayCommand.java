package io.sluice.cli;

import picocli.CommandLine.Mixin;
import tools.jackson.databind.JsonNode;

import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * A command that calls the gateway ({@code admin backup take}, {@code admin exporters}, ...): the console it prints
 * to, the options every such command shares ({@link GatewayOptions}), and the one way from an answer of the gateway to
 * what is printed and the exit code ({@link Answers}). Built by the CLI's factory with its console.
 */
abstract class GatewayCommand implements Callable<Integer>
{
    final CliConsole console;

    @Mixin
    GatewayOptions gateway;

    GatewayCommand(final CliConsole console)
    {
        this.console = console;
    }

    /** {@link Answers#print} in this command's output format: {@code what} names the call in an error line. */
    final int printAnswer(final String what, final GatewayAnswer answer, final Consumer<JsonNode> table)
    {
        return Answers.print(console, gateway.output(), what, answer, table);
    }

    /** {@link Answers#reportError}: one line on stderr, and the answer's exit code. */
    final int reportError(final String what, final GatewayAnswer answer)
    {
        return Answers.reportError(console, what, answer);
    }
}
