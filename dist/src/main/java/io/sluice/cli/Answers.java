package io.sluice.cli;

/** Turns an error answer of the gateway into one line on stderr and an exit code. */
final class Answers
{
    private Answers()
    {
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
