package io.sluice.cli;

import picocli.CommandLine.Command;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code admin rebalance}: CONTRACT §3 "Leader balance". Prints one row per partition (its preferred broker, its
 * leader afterwards, and why they differ) also when some partition could not move (HTTP 503, exit 1), since that is
 * when the reasons matter.
 */
@Command(
    name = "rebalance",
    mixinStandardHelpOptions = true,
    description = {
        // The first line stands alone in 'admin --help': a whole sentence.
        "Move each partition's leadership to its preferred broker where that replica is in sync.",
        "The preferred broker is the first of the partition's placement. Exit 0 when every partition is on its",
        "preferred broker afterwards, 1 otherwise."})
final class RebalanceCommand extends GatewayCommand
{
    RebalanceCommand(final CliConsole console)
    {
        super(console);
    }

    @Override
    public Integer call() throws GatewayUnreachableException
    {
        final GatewayAnswer answer = gateway.connect(console).post("/rebalance");
        final JsonNode partitions = answer.json().path("partitions");
        if (!partitions.isArray() || (!answer.isSuccess() && answer.status() != 503))
        {
            return reportError("rebalance", answer);
        }
        if (gateway.output() == OutputFormat.json)
        {
            console.out().println(answer.body());
        }
        else
        {
            final Table table = new Table("PARTITION", "PREFERRED", "LEADER", "OUTCOME", "REASON");
            for (final JsonNode partition : partitions)
            {
                final long leader = partition.path("leaderId").asLong(-1);
                table.row(partition.path("partitionId").asString(), partition.path("preferredBrokerId").asString(),
                    leader < 0 ? "none" : leader, partition.path("outcome").asString("?"),
                    partition.path("error").isMissingNode() || partition.path("error").isNull() ? "" :
                        partition.path("error").asString());
            }
            table.print(console.out());
        }
        if (answer.isSuccess())
        {
            return ExitCode.SUCCEEDED;
        }
        final List<String> off = new ArrayList<>();
        for (final JsonNode partition : partitions)
        {
            if (!"SUCCEEDED".equals(partition.path("outcome").asString()))
            {
                off.add("partition " + partition.path("partitionId").asString() + " led by " +
                    (partition.path("leaderId").asLong(-1) < 0 ? "none" : partition.path("leaderId").asString()) +
                    ": " + partition.path("error").asString(""));
            }
        }
        console.err().println("admin: rebalance incomplete: " + (partitions.size() - off.size()) + " of " +
            partitions.size() + " partitions on their preferred broker (" + String.join("; ", off) +
            "); bring the preferred brokers back in sync and run it again");
        return answer.exitCode();
    }
}
