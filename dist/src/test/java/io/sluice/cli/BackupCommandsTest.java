package io.sluice.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(30)
class BackupCommandsTest
{
    private static final String IN_PROGRESS = "{\"backupId\": 42, \"state\": \"IN_PROGRESS\", \"failureReason\": null,"
        + " \"createdAt\": \"2026-12-03T14:00:00Z\", \"completedAt\": null, \"holdMillis\": 0, \"bytes\": 0,"
        + " \"partitions\": [{\"partitionId\": 1, \"brokerId\": 0, \"state\": \"IN_PROGRESS\", \"checkpointPosition\": 118,"
        + " \"exporterPositions\": {\"file\": 100}, \"bytes\": 0}], \"sinks\": []}";
    private static final String COMPLETED = IN_PROGRESS.replace("\"IN_PROGRESS\"", "\"COMPLETED\"")
        .replace("\"bytes\": 0", "\"bytes\": 2048");

    @Test
    void takeWithWaitFollowsTheBackupUntilItCompletedAndExitsZero() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            final AtomicInteger polls = new AtomicInteger();
            gateway.on("POST", "/actuator/backups",
                FakeGateway.Reply.json(202, "{\"backupId\": 42, \"state\": \"IN_PROGRESS\", \"holdMillis\": 0}"));
            gateway.on("GET", "/actuator/backups/42", (request) ->
                FakeGateway.Reply.json(200, polls.incrementAndGet() < 3 ? IN_PROGRESS : COMPLETED));

            final CliRun run = CliRun.run("backup", "take", "--id", "42", "--wait", "--interval", "10ms",
                "--gateway", gateway.url(), "--token", "t0k");

            assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
            assertThat(gateway.requests("POST", "/actuator/backups").get(0).body()).isEqualTo("{\"backupId\": 42}");
            assertThat(run.out()).contains("backup 42 IN_PROGRESS").contains("backup 42 COMPLETED");
            assertThat(run.out().lines().filter((line) -> line.matches("1 +0 +COMPLETED +118 +file=100 +2048 *")))
                .hasSize(1);
        }
    }

    @Test
    void takeWithWaitPollsThroughAStoreBrieflyUnavailableAndStillEndsOnTheBackupsOutcome() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            final AtomicInteger polls = new AtomicInteger();
            gateway.on("POST", "/actuator/backups",
                FakeGateway.Reply.json(202, "{\"backupId\": 42, \"state\": \"IN_PROGRESS\", \"holdMillis\": 0}"));
            gateway.on("GET", "/actuator/backups/42", (request) -> switch (polls.incrementAndGet())
            {
                case 1 -> FakeGateway.Reply.json(200, IN_PROGRESS);
                case 2, 3 -> FakeGateway.Reply.error(503, "unavailable", "backup store: connection refused");
                default -> FakeGateway.Reply.json(200, COMPLETED);
            });

            final CliRun run = CliRun.run("backup", "take", "--id", "42", "--wait", "--interval", "10ms",
                "--gateway", gateway.url());

            assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
            assertThat(run.err().lines().filter((line) -> line.contains("status not available"))).singleElement()
                .asString().contains("503").contains("backup store: connection refused");
            assertThat(run.out()).contains("backup 42 COMPLETED");
        }
    }

    @Test
    void statusWatchOfAnUnknownBackupEndsAtOnceWithTheGatewaysAnswer() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            gateway.on("GET", "/actuator/backups/7", FakeGateway.Reply.error(404, "not-found", "no backup 7"));

            final CliRun run = CliRun.run("backup", "status", "7", "--watch", "--interval", "10ms",
                "--gateway", gateway.url());

            assertThat(run.exitCode()).isEqualTo(ExitCode.REFUSED);
            assertThat(run.err()).contains("no backup 7").doesNotContain("status not available");
            assertThat(gateway.requests("GET", "/actuator/backups/7")).hasSize(1);
        }
    }

    @Test
    void aReusedIdIsRefusedWithExitThree() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            gateway.on("POST", "/actuator/backups", FakeGateway.Reply.error(409, "conflict",
                "backup id 42 is not greater than the latest backup's, 42"));

            final CliRun run = CliRun.run("backup", "take", "--id", "42", "--gateway", gateway.url());

            assertThat(run.exitCode()).isEqualTo(ExitCode.REFUSED);
            assertThat(run.err()).contains("not greater than the latest");
        }
    }

    @Test
    void verifyNamesEachProblemAndExitsOneWhenTheBackupDoesNotVerify() throws IOException
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            gateway.on("POST", "/actuator/backups/42/verify", FakeGateway.Reply.json(200, "{\"backupId\": 42, \"ok\": false,"
                + " \"checkedObjects\": 7, \"problems\": [{\"object\": \"backups/42/partition-1/state\","
                + " \"problem\": \"missing\"}]}"));

            final CliRun run = CliRun.run("backup", "verify", "42", "--gateway", gateway.url());

            assertThat(run.exitCode()).isEqualTo(ExitCode.FAILED);
            assertThat(run.out()).contains("DOES NOT VERIFY").contains("backups/42/partition-1/state: missing");
        }
    }
}
