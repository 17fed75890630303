package io.sluice.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(30)
class ExportersCommandTest
{
    private static final String VIEW = "{\"exporters\": [{\"id\": \"search\", \"type\": \"opensearch\", \"partitions\": ["
        + "{\"partitionId\": 1, \"position\": 118, \"lag\": 4, \"sentPosition\": 122, \"sentLag\": 0,"
        + " \"state\": \"SOFT_PAUSED\", \"lastError\": null},"
        + "{\"partitionId\": 2, \"position\": 40, \"lag\": 60, \"sentPosition\": 40, \"sentLag\": 60,"
        + " \"state\": \"RETRYING\", \"lastError\": \"Connection refused\"},"
        + "{\"partitionId\": 3, \"position\": -1, \"lag\": -1, \"sentPosition\": -1, \"sentLag\": -1,"
        + " \"state\": \"UNKNOWN\", \"lastError\": \"no leader\"}]}]}";

    @Test
    void exportersShowsOneRowPerExporterAndPartitionWithTheAcknowledgedAndTheSentPosition() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            gateway.on("GET", "/actuator/exporters", FakeGateway.Reply.json(200, VIEW));

            final CliRun run = CliRun.run("exporters", "--gateway", gateway.url());

            assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
            assertThat(run.out().lines().toList()).containsExactly(
                "EXPORTER  TYPE        PARTITION  POSITION  LAG  SENT  SENT LAG  STATE        LAST ERROR",
                "search    opensearch  1          118       4    122   0         SOFT_PAUSED  -",
                "search    opensearch  2          40        60   40    60        RETRYING     Connection refused",
                "search    opensearch  3          -         -    -     -         UNKNOWN      no leader");
        }
    }

    @Test
    void jsonOutputIsTheGatewaysAnswer() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            gateway.on("GET", "/actuator/exporters", FakeGateway.Reply.json(200, VIEW));

            final CliRun run = CliRun.run("exporters", "--gateway", gateway.url(), "--output", "json");

            assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
            assertThat(run.out()).contains("\"RETRYING\"").contains("\"Connection refused\"");
        }
    }
}
