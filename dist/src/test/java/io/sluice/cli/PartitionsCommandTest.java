package io.sluice.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(30)
class PartitionsCommandTest
{
    private static final String VIEW = "{\"clusterSize\": 3, \"partitionCount\": 1, \"replicationFactor\": 2,"
        + " \"controlLeaderId\": 2,"
        + " \"brokers\": [{\"brokerId\": 0, \"address\": \"127.0.0.1:26501\", \"reachable\": true, \"reason\": null},"
        + " {\"brokerId\": 1, \"address\": \"127.0.0.1:26511\", \"reachable\": false, \"reason\": \"connection refused\"}],"
        + " \"partitions\": [{\"partitionId\": 1, \"leaderId\": 0, \"health\": \"DEGRADED\", \"replicas\": ["
        + " {\"brokerId\": 0, \"role\": \"LEADER\", \"term\": 4, \"reachable\": true, \"leaderId\": 0,"
        + " \"lastPosition\": 240, \"exportedPosition\": 118},"
        + " {\"brokerId\": 1, \"role\": \"UNKNOWN\", \"term\": -1, \"reachable\": false, \"leaderId\": -1,"
        + " \"lastPosition\": -1, \"exportedPosition\": -1}]}]}";

    @Test
    void partitionsShowsBrokersAndEveryReplica() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            gateway.on("GET", "/actuator/partitions", FakeGateway.Reply.json(200, VIEW));

            final CliRun run = CliRun.run("partitions", "--gateway", gateway.url());

            assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
            assertThat(run.out())
                .contains("cluster: 3 brokers, 1 partitions, replication factor 2, control group led by broker 2")
                .contains("connection refused");
            assertThat(run.out().lines().filter(line -> line.matches("1 +0 +DEGRADED +0 +LEADER +4 +yes +240 +118")))
                .hasSize(1);
            assertThat(run.out().lines().filter(line -> line.matches("1 +0 +DEGRADED +1 +UNKNOWN +- +no +- +-")))
                .hasSize(1);
        }
    }

    @Test
    void anAnswerOfAnotherShapeIsShownFlattened() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            gateway.on("GET", "/actuator/partitions",
                FakeGateway.Reply.json(200, "{\"nodes\": [{\"id\": 0, \"parts\": [{\"p\": 1}, {\"p\": 2}]}]}"));

            final CliRun run = CliRun.run("partitions", "--gateway", gateway.url());

            assertThat(run.exitCode()).isEqualTo(ExitCode.SUCCEEDED);
            assertThat(run.out().lines().toList()).containsExactly("ID  P", "0   1", "0   2");
        }
    }

    @Test
    void gatewayDefaultsToTheEnvironmentThenLoopback9600() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            gateway.on("GET", "/actuator/partitions", FakeGateway.Reply.json(200, VIEW));

            final CliRun run = CliRun.run(java.util.Map.of("SLUICE_GATEWAY", gateway.url() + "/actuator/"), false,
                "partitions");

            assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
            assertThat(gateway.requests("GET", "/actuator/partitions")).hasSize(1);
        }
    }
}
