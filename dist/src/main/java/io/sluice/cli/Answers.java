package io.sluice.cli;

import tools.jackson.databind.JsonNode;

import java.util.function.Consumer;

/** Turns an answer of the gateway into what a command prints and its exit code. */
final class Answers
{
    private Answers()
    {
    }

    /**
     * The flow of every command that makes one call: an error answer becomes one line on stderr and its
     * exit code; a success is printed as the gateway's body with {@code --output json}, else by {@code table}.
     */
    static int print(
        final CliConsole console,
        final OutputFormat output,
        final String what,
        final GatewayAnswer answer,
        final Consumer<JsonNode> table)
    {
        if (!answer.isSuccess())
        {
            return reportError(console, what, answer);
        }
        if (output == OutputFormat.json)
        {
            console.out().println(answer.body());
        }
        else
        {
            table.accept(answer.json());
        }
        return ExitCode.SUCCEEDED;
    }

    static int reportError(final CliConsole console, final String what, final GatewayAnswer answer)
    {
        final String advice = answer.advice();
        final String verb = answer.status() >= 400 && answer.status() < 500 ? " refused" : " failed";
        console.err().println("admin: " + what + verb + ": HTTP " + answer.status() + " from "
            + answer.method() + " /actuator" + answer.path() + ": " + answer.errorText()
            + (advice.isEmpty() ? "" : "; " + advice));
        return answer.exitCode();
    }
}
