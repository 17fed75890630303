package io.sluice.cli;

import io.sluice.protocol.cluster.PartitionReplica;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One pause, soft pause or resume, with {@code --retries}: the first round acts on the asked pairs
 * (all by default); each further round posts {@code {"targets": [...]}} with only the pairs whose
 * latest outcome was FAILED or TIMED_OUT, after an exponential backoff. The exit code reflects the
 * latest outcome of every pair seen. Retry rounds are reported on stderr so stdout stays the answer.
 */
final class ExportingCall
{
    static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
    static final String SUCCEEDED = "SUCCEEDED";
    static final String FAILED = "FAILED";
    static final String TIMED_OUT = "TIMED_OUT";

    private final CliConsole console;
    private final GatewayOptions gateway;
    private final String name;
    private final String path;
    private final Map<PartitionReplica, JsonNode> latest = new TreeMap<>();

    ExportingCall(final CliConsole console, final GatewayOptions gateway, final String name, final String path)
    {
        this.console = console;
        this.gateway = gateway;
        this.name = name;
        this.path = path;
    }

    int run(final ExportingCommands.RetryOptions retry) throws GatewayUnreachableException, InterruptedException
    {
        final ManagementClient client = gateway.connect(console);
        List<PartitionReplica> toSend = ExportingCommands.sorted(retry.targets);
        Duration backoff = retry.backoff;
        GatewayAnswer answer = null;
        String operation = null;
        int rounds = 0;

        for (int round = 0; round <= retry.retries; round++)
        {
            if (round > 0)
            {
                console.sleeper().sleep(backoff);
                backoff = min(backoff.multipliedBy(2), MAX_BACKOFF);
            }
            rounds++;
            final boolean lastRound = round == retry.retries;
            final String roundLabel = name + " round " + (round + 1) + "/" + (retry.retries + 1);

            try
            {
                answer = toSend.isEmpty() ? client.post(path) : client.postJson(path, targetsBody(toSend));
            }
            catch (final GatewayUnreachableException ex)
            {
                if (lastRound)
                {
                    throw ex;
                }
                console.err().println(roundLabel + ": gateway unreachable (" + ex.getMessage() + "); retrying in "
                    + Durations.format(backoff));
                continue;
            }

            if (answer.status() >= 400 && answer.status() < 500)
            {
                return Answers.reportError(console, name, answer);
            }
            final JsonNode targets = answer.json().path("targets");
            if (!targets.isArray())
            {
                // An error without per-pair outcomes (e.g. the gateway's own 500): the whole round failed.
                if (lastRound)
                {
                    return Answers.reportError(console, name, answer);
                }
                console.err().println(roundLabel + ": HTTP " + answer.status() + " " + answer.errorText()
                    + "; retrying in " + Durations.format(backoff));
                continue;
            }

            operation = answer.json().path("operation").asString(operation);
            for (final JsonNode target : targets)
            {
                latest.put(TargetPairs.of(target), target);
            }
            final List<PartitionReplica> unfinished = unfinished();
            if (retry.retries > 0)
            {
                console.err().println(roundLabel + ": " + summary()
                    + (unfinished.isEmpty() ? "" : lastRound ? "; no retries left"
                    : "; retrying " + labels(unfinished) + " in " + Durations.format(backoff)));
            }
            if (unfinished.isEmpty())
            {
                break;
            }
            toSend = unfinished;
        }

        final int exitCode = exitCode();
        if (gateway.output() == OutputFormat.json)
        {
            console.out().println(rounds == 1 ? answer.body() : mergedAnswer(operation).toString());
        }
        else
        {
            printTable();
        }
        if (exitCode != ExitCode.SUCCEEDED)
        {
            console.err().println("admin: " + name + " incomplete: " + summary() + " (" + failedPairs()
                + "); " + (retry.retries == 0 ? "retry just those with --retries N" : "retry later")
                + " or bring their brokers back");
        }
        return exitCode;
    }

    private List<PartitionReplica> unfinished()
    {
        final List<PartitionReplica> pairs = new ArrayList<>();
        latest.forEach((pair, target) ->
        {
            if (!SUCCEEDED.equals(target.path("outcome").asString("")))
            {
                pairs.add(pair);
            }
        });
        return pairs;
    }

    private int exitCode()
    {
        int code = ExitCode.SUCCEEDED;
        for (final JsonNode target : latest.values())
        {
            final String outcome = target.path("outcome").asString("");
            if (TIMED_OUT.equals(outcome))
            {
                code = ExitCode.worst(code, ExitCode.TIMED_OUT);
            }
            else if (!SUCCEEDED.equals(outcome))
            {
                code = ExitCode.worst(code, ExitCode.FAILED);
            }
        }
        return code;
    }

    private String summary()
    {
        int succeeded = 0;
        int failed = 0;
        int timedOut = 0;
        for (final JsonNode target : latest.values())
        {
            final String outcome = target.path("outcome").asString("");
            if (SUCCEEDED.equals(outcome))
            {
                succeeded++;
            }
            else if (TIMED_OUT.equals(outcome))
            {
                timedOut++;
            }
            else
            {
                failed++;
            }
        }
        return succeeded + " succeeded, " + failed + " failed, " + timedOut + " timed out";
    }

    private String failedPairs()
    {
        final StringBuilder text = new StringBuilder();
        latest.forEach((pair, target) ->
        {
            final String outcome = target.path("outcome").asString("");
            if (!SUCCEEDED.equals(outcome))
            {
                if (text.length() > 0)
                {
                    text.append(", ");
                }
                text.append("broker ").append(pair.brokerId()).append(" partition ").append(pair.partitionId())
                    .append(' ').append(outcome.isEmpty() ? FAILED : outcome);
                final String error = target.path("error").asString("");
                if (!error.isEmpty())
                {
                    text.append(": ").append(error);
                }
            }
        });
        return text.toString();
    }

    private void printTable()
    {
        final Table table = new Table("PAIR", "OUTCOME", "ERROR");
        latest.forEach((pair, target) ->
            table.row(pair.label(), target.path("outcome").asString(FAILED), target.path("error").asString("")));
        console.out().println(name + ": " + summary());
        table.print(console.out());
    }

    private ObjectNode mergedAnswer(final String operation)
    {
        final ObjectNode merged = ManagementClient.mapper().createObjectNode();
        merged.put("operation", operation);
        final int code = exitCode();
        merged.put("result", code == ExitCode.SUCCEEDED ? SUCCEEDED : code == ExitCode.TIMED_OUT ? TIMED_OUT : FAILED);
        final ArrayNode targets = merged.putArray("targets");
        latest.values().forEach(targets::add);
        return merged;
    }

    private static String labels(final List<PartitionReplica> pairs)
    {
        return pairs.stream().map(PartitionReplica::label).toList().toString();
    }

    static String targetsBody(final List<PartitionReplica> pairs)
    {
        final ObjectNode body = ManagementClient.mapper().createObjectNode();
        final ArrayNode targets = body.putArray("targets");
        for (final PartitionReplica pair : pairs)
        {
            targets.addObject().put("brokerId", pair.brokerId()).put("partitionId", pair.partitionId());
        }
        return body.toString();
    }

    private static Duration min(final Duration a, final Duration b)
    {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
