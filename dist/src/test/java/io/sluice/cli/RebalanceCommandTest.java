package io.sluice.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(30)
class RebalanceCommandTest
{
    private static final String BALANCED = "{\"operation\": \"REBALANCE\", \"result\": \"SUCCEEDED\", \"partitions\": ["
        + "{\"partitionId\": 1, \"preferredBrokerId\": 0, \"leaderId\": 0, \"outcome\": \"SUCCEEDED\"},"
        + "{\"partitionId\": 2, \"preferredBrokerId\": 1, \"leaderId\": 1, \"outcome\": \"SUCCEEDED\"}]}";
    private static final String ONE_AWAY = "{\"operation\": \"REBALANCE\", \"result\": \"FAILED\", \"partitions\": ["
        + "{\"partitionId\": 1, \"preferredBrokerId\": 0, \"leaderId\": 0, \"outcome\": \"SUCCEEDED\"},"
        + "{\"partitionId\": 2, \"preferredBrokerId\": 1, \"leaderId\": 2, \"outcome\": \"FAILED\","
        + " \"error\": \"broker 1 has not answered the leader of partition 2 for 5000 ms\"}]}";

    @Test
    void theCommandListsShowEachCommandWithAWholeSentence()
    {
        final CliRun admin = CliRun.run("--help");
        final CliRun backfill = CliRun.run("backfill", "--help");

        assertThat(entries(admin.out()))
            .contains("rebalance Move each partition's leadership to its preferred broker where that replica is in sync.");
        assertThat(entries(backfill.out()))
            .contains("start Reset EXPORTER to the latest positions and backfill the skipped ranges with N tasks.")
            .contains("status Show every backfill, or one with its tasks.");
        for (final String out : new String[]{admin.out(), backfill.out()})
        {
            // Each listed command's description ends a sentence: nothing cut mid-way.
            assertThat(entries(out)).isNotEmpty().allSatisfy(entry -> assertThat(entry).endsWith("."));
        }
    }

    /** The entries of a help's "Commands:" section, each with its wrapped lines joined: "name description". */
    private static java.util.List<String> entries(final String help)
    {
        final java.util.List<String> entries = new java.util.ArrayList<>();
        boolean inCommands = false;
        for (final String line : help.lines().toList())
        {
            if (line.equals("Commands:"))
            {
                inCommands = true;
            }
            else if (inCommands && line.matches("^  \\S.*"))
            {
                entries.add(line.strip().replaceAll("\\s+", " "));
            }
            else if (inCommands && line.matches("^\\s{3,}\\S.*") && !entries.isEmpty())
            {
                entries.set(entries.size() - 1, entries.get(entries.size() - 1) + " " + line.strip());
            }
            else
            {
                inCommands = false;
            }
        }
        return entries;
    }

    @Test
    void aBalancedAnswerPrintsOneRowPerPartitionAndExitsZero() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            gateway.on("POST", "/actuator/rebalance", FakeGateway.Reply.json(200, BALANCED));

            final CliRun run = CliRun.run("rebalance", "--gateway", gateway.url(), "--token", "t0k");

            assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
            assertThat(run.out().lines().filter(line -> line.matches("2 +1 +1 +SUCCEEDED *"))).hasSize(1);
            final FakeGateway.Request request = gateway.requests("POST", "/actuator/rebalance").get(0);
            assertThat(request.header("Authorization")).isEqualTo("Bearer t0k");
            assertThat(request.query()).isNull();
            assertThat(request.body()).isEmpty();
        }
    }

    @Test
    void aPartitionLeftAwayFromItsPreferredBrokerShowsWhyAndExitsOne() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            gateway.on("POST", "/actuator/rebalance", FakeGateway.Reply.json(503, ONE_AWAY));

            final CliRun run = CliRun.run("rebalance", "--gateway", gateway.url());

            assertThat(run.exitCode()).isEqualTo(ExitCode.FAILED);
            assertThat(run.out()).contains("has not answered the leader of partition 2");
            assertThat(run.out().lines().filter(line -> line.matches("2 +1 +2 +FAILED +broker 1 .*"))).hasSize(1);
            assertThat(run.err()).contains("rebalance incomplete: 1 of 2 partitions on their preferred broker")
                .contains("partition 2 led by 2");
        }
    }

    @Test
    void jsonOutputPrintsTheGatewaysAnswerUnchanged() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            gateway.on("POST", "/actuator/rebalance", FakeGateway.Reply.json(503, ONE_AWAY));

            final CliRun run = CliRun.run("rebalance", "--gateway", gateway.url(), "--output", "json");

            assertThat(run.exitCode()).isEqualTo(ExitCode.FAILED);
            assertThat(run.out().strip()).isEqualTo(ONE_AWAY);
        }
    }

    @Test
    void aRefusalExitsThreeWithTheGatewaysMessage() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            gateway.on("POST", "/actuator/rebalance", FakeGateway.Reply.error(401, "Unauthorized",
                "missing 'Authorization: Bearer <token>' header (sluice.management.token is set)"));

            final CliRun run = CliRun.run("rebalance", "--gateway", gateway.url());

            assertThat(run.exitCode()).isEqualTo(ExitCode.REFUSED);
            assertThat(run.err()).contains("rebalance refused: HTTP 401").contains("--token");
        }
    }
}
