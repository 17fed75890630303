package io.sluice.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(60)
class BackfillCommandsTest
{
    /** The shape of the gateway's BackfillView: inclusive ranges, totals, tasks with exportedUpTo. */
    private static final String PLAN = "{\"backfillId\": \"bf-7\", \"exporterId\": \"file\", \"state\": \"PENDING\","
        + " \"progress\": 0.0, \"exportedPositions\": 0, \"totalPositions\": 202,"
        + " \"ranges\": [{\"partitionId\": 1, \"fromPosition\": 119, \"toPosition\": 240},"
        + " {\"partitionId\": 2, \"fromPosition\": 1, \"toPosition\": 80}],"
        + " \"tasks\": [{\"taskId\": 0, \"partitionId\": 1, \"fromPosition\": 119, \"toPosition\": 180},"
        + " {\"taskId\": 1, \"partitionId\": 1, \"fromPosition\": 181, \"toPosition\": 240},"
        + " {\"taskId\": 2, \"partitionId\": 2, \"fromPosition\": 1, \"toPosition\": 80}]}";

    private FakeGateway gateway;

    @BeforeEach
    void startGateway() throws IOException
    {
        gateway = FakeGateway.start();
    }

    @AfterEach
    void stopGateway()
    {
        gateway.close();
    }

    @Test
    void startPostsTheTaskCountAndPrintsThePlan()
    {
        gateway.on("POST", "/actuator/exporters/file/resetToLatestAndBackfill", FakeGateway.Reply.json(202, PLAN));

        final CliRun run = CliRun.run("backfill", "start", "file", "--tasks", "3", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        final FakeGateway.Request post = gateway.requests().get(0);
        assertThat(post.method()).isEqualTo("POST");
        assertThat(post.query()).isEqualTo("backfillTaskCount=3");
        assertThat(post.body()).isEmpty();
        assertThat(run.out())
            .contains("backfill bf-7 started for exporter file: 2 ranges, 202 positions, 3 tasks")
            .contains("admin backfill status bf-7 --watch");
    }

    @Test
    void fewerTasksThanLaggingPartitionsAreCountedAsTasksNotAsRanges()
    {
        // Four tasks over six lagging partitions: tasks 1 and 2 take two partitions each.
        final StringBuilder tasks = new StringBuilder();
        final StringBuilder ranges = new StringBuilder();
        for (int partition = 1; partition <= 6; partition++)
        {
            tasks.append(partition == 1 ? "" : ",").append("{\"taskId\":").append((partition - 1) % 4 + 1)
                .append(",\"partitionId\":").append(partition).append(",\"fromPosition\":1,\"toPosition\":10}");
            ranges.append(partition == 1 ? "" : ",").append("{\"partitionId\":").append(partition)
                .append(",\"fromPosition\":1,\"toPosition\":10}");
        }
        gateway.on("POST", "/actuator/exporters/file/resetToLatestAndBackfill", FakeGateway.Reply.json(202,
            "{\"backfillId\":\"bf-4\",\"exporterId\":\"file\",\"state\":\"PENDING\",\"ranges\":[" + ranges +
                "],\"tasks\":[" + tasks + "]}"));

        final CliRun run = CliRun.run("backfill", "start", "file", "--tasks", "4", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).contains("backfill bf-4 started for exporter file: 6 ranges, 60 positions, 4 tasks");
    }

    @Test
    void dryRunAsksForDryRunAndSaysNothingChanged()
    {
        gateway.on("POST", "/actuator/exporters/file/resetToLatestAndBackfill", FakeGateway.Reply.json(200, PLAN));

        final CliRun run = CliRun.run("backfill", "start", "file", "--dry-run", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(gateway.requests().get(0).query()).isEqualTo("dryRun=true");
        assertThat(run.out()).contains("dry run").contains("nothing changed").contains("119").contains("240");
    }

    @Test
    void startJsonOutputPrintsTheAnswer()
    {
        gateway.on("POST", "/actuator/exporters/file/resetToLatestAndBackfill", FakeGateway.Reply.json(202, PLAN));

        final CliRun run = CliRun.run("backfill", "start", "file", "-o", "json", "--gateway", gateway.url());

        assertThat(run.exitCode()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(JsonMapper.builder().build().readTree(run.out()).path("backfillId").asString()).isEqualTo("bf-7");
    }

    @Test
    void unknownExporterAndRunningBackfillAreRefusedWithExitThree()
    {
        gateway.on("POST", "/actuator/exporters/nope/resetToLatestAndBackfill",
            FakeGateway.Reply.error(404, "Not Found", "unknown exporter 'nope'"));
        gateway.on("POST", "/actuator/exporters/file/resetToLatestAndBackfill",
            FakeGateway.Reply.error(409, "Conflict", "backfill bf-7 of exporter file is still RUNNING"));

        final CliRun unknown = CliRun.run("backfill", "start", "nope", "--gateway", gateway.url());
        assertThat(unknown.exitCode()).isEqualTo(ExitCode.REFUSED);
        assertThat(unknown.err()).contains("HTTP 404").contains("unknown exporter 'nope'");

        final CliRun running = CliRun.run("backfill", "start", "file", "--gateway", gateway.url());
        assertThat(running.exitCode()).isEqualTo(ExitCode.REFUSED);
        assertThat(running.err()).contains("HTTP 409").contains("still RUNNING").contains("cancel");
    }

    @Test
    void aPartialStartFailsAndNamesTheRegisteredBackfillToFollow()
    {
        gateway.on("POST", "/actuator/exporters/file/resetToLatestAndBackfill", FakeGateway.Reply.json(503,
            "{\"error\": \"Service Unavailable\", \"message\": \"partition 3: no leader\", \"backfillId\": \"bf-8\","
                + " \"failures\": [\"partition 3: no leader\"], \"ranges\": [], \"tasks\": [],"
                + " \"unavailablePartitions\": [3]}"));

        final CliRun run = CliRun.run("backfill", "start", "file", "--gateway", gateway.url());

        assertThat(run.exitCode()).isEqualTo(ExitCode.FAILED);
        assertThat(run.err()).contains("partition 3: no leader").contains("admin backfill status bf-8 --watch")
            .contains("admin partitions").doesNotContain("--retries");
    }

    @Test
    void badTaskCountIsRefusedBeforeAnyCall()
    {
        assertThat(CliRun.run("backfill", "start", "file", "--tasks", "0", "--gateway", gateway.url()).exitCode())
            .isEqualTo(ExitCode.REFUSED);
        assertThat(CliRun.run("backfill", "start", "file", "--tasks", "many", "--gateway", gateway.url()).exitCode())
            .isEqualTo(ExitCode.REFUSED);
        assertThat(CliRun.run("backfill", "start", "--gateway", gateway.url()).exitCode()).isEqualTo(ExitCode.REFUSED);
        assertThat(CliRun.run("backfill", "status", "--watch", "--gateway", gateway.url()).exitCode())
            .isEqualTo(ExitCode.REFUSED);
        assertThat(gateway.requests()).isEmpty();
    }

    @Test
    void statusListsEveryBackfill()
    {
        gateway.on("GET", "/actuator/backfills", FakeGateway.Reply.json(200,
            "{\"backfills\": [" + backfill("bf-7", "RUNNING", 20, 80) + "," + backfill("bf-6", "SUCCEEDED", 80, 80) + "]}"));

        final CliRun run = CliRun.run("backfill", "status", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(run.out()).contains("bf-6").contains("100.0%").contains("bf-7").contains("25.0%");
    }

    @Test
    void statusOfOneShowsItsTasks()
    {
        gateway.on("GET", "/actuator/backfills/bf-7", FakeGateway.Reply.json(200, backfill("bf-7", "RUNNING", 20, 80)));

        final CliRun run = CliRun.run("backfill", "status", "bf-7", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(run.out()).contains("backfill bf-7 of exporter file: RUNNING, 25.0% (20/80 positions)")
            .contains("EXPORTED UP TO");
    }

    @Test
    void statusOfAnUnknownBackfillExitsThree()
    {
        final CliRun run = CliRun.run("backfill", "status", "bf-404", "--gateway", gateway.url());

        assertThat(run.exitCode()).isEqualTo(ExitCode.REFUSED);
        assertThat(run.err()).contains("HTTP 404");
    }

    @Test
    void watchFollowsTheBackfillToSucceededAndExitsZero()
    {
        final AtomicInteger polls = new AtomicInteger();
        gateway.on("GET", "/actuator/backfills/bf-7", request ->
        {
            final int poll = polls.getAndIncrement();
            final long exported = Math.min(80, poll * 20L);
            return FakeGateway.Reply.json(200, backfill("bf-7", exported == 80 ? "SUCCEEDED" : "RUNNING", exported, 80));
        });

        final CliRun run = CliRun.run(Map.of(), false, "backfill", "status", "bf-7", "--watch", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(polls.get()).isEqualTo(5);
        // Without a terminal: no carriage returns; lines at most every 5 s of the (fake) clock, and the end.
        assertThat(run.out()).doesNotContain("\r");
        final List<String> lines = run.out().lines().toList();
        assertThat(lines.get(0)).startsWith("[------------------------------]   0.0%  0/80 records");
        assertThat(lines).anySatisfy(line -> assertThat(line).contains("100.0%  80/80 records  20 rec/s  ETA 0s  SUCCEEDED"));
        assertThat(lines.get(lines.size() - 1)).isEqualTo("backfill bf-7 SUCCEEDED");
        assertThat(run.sleeps()).hasSize(4);
    }

    @Test
    void watchOnATerminalRedrawsTheBarInPlace()
    {
        final AtomicInteger polls = new AtomicInteger();
        gateway.on("GET", "/actuator/backfills/bf-7", request ->
        {
            final long exported = Math.min(80, polls.getAndIncrement() * 40L);
            return FakeGateway.Reply.json(200, backfill("bf-7", exported == 80 ? "SUCCEEDED" : "RUNNING", exported, 80));
        });

        final CliRun run = CliRun.run(Map.of(), true, "backfill", "status", "bf-7", "--watch", "--gateway", gateway.url());

        assertThat(run.exitCode()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(run.out()).contains("\r[###############---------------]  50.0%  40/80 records  40 rec/s  ETA 1s  RUNNING")
            .contains("\r[##############################] 100.0%");
        assertThat(run.out().split("\n")).hasSize(2);
    }

    @Test
    void watchEndingFailedOrCancelledExitsOne()
    {
        gateway.on("GET", "/actuator/backfills/bf-8", FakeGateway.Reply.json(200, backfill("bf-8", "FAILED", 10, 80)));
        gateway.on("GET", "/actuator/backfills/bf-9", FakeGateway.Reply.json(200, backfill("bf-9", "CANCELLED", 10, 80)));

        final CliRun failed = CliRun.run("backfill", "status", "bf-8", "--watch", "--gateway", gateway.url());
        assertThat(failed.exitCode()).isEqualTo(ExitCode.FAILED);
        assertThat(failed.err()).contains("backfill bf-8 FAILED");

        assertThat(CliRun.run("backfill", "status", "bf-9", "--watch", "--gateway", gateway.url()).exitCode())
            .isEqualTo(ExitCode.FAILED);
    }

    @Test
    void watchToleratesAFewUnansweredPollsThenExitsFour() throws IOException
    {
        final int port;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress()))
        {
            port = socket.getLocalPort();
        }

        final CliRun run = CliRun.run("backfill", "status", "bf-7", "--watch", "--gateway", "http://127.0.0.1:" + port);

        assertThat(run.exitCode()).isEqualTo(ExitCode.UNREACHABLE);
        assertThat(run.sleeps()).hasSize(4);
        assertThat(run.err()).contains("gateway unreachable");
    }

    @Test
    void cancelSendsDelete()
    {
        gateway.on("DELETE", "/actuator/backfills/bf-7", FakeGateway.Reply.json(200, backfill("bf-7", "CANCELLED", 20, 80)));

        final CliRun run = CliRun.run("backfill", "cancel", "bf-7", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(run.out()).contains("backfill bf-7 cancelled (state CANCELLED)");
        assertThat(gateway.requests("DELETE", "/actuator/backfills/bf-7")).hasSize(1);
    }

    @Test
    void cancelOfAFinishedBackfillIsRefused()
    {
        gateway.on("DELETE", "/actuator/backfills/bf-6",
            FakeGateway.Reply.error(409, "Conflict", "backfill bf-6 already SUCCEEDED"));

        assertThat(CliRun.run("backfill", "cancel", "bf-6", "--gateway", gateway.url()).exitCode())
            .isEqualTo(ExitCode.REFUSED);
    }

    /** A backfill of one task over [1, total], exported up to {@code exported}, as the gateway shows it. */
    static String backfill(final String id, final String state, final long exported, final long total)
    {
        return "{\"backfillId\": \"" + id + "\", \"exporterId\": \"file\", \"state\": \"" + state + "\", "
            + "\"progress\": " + ((double)exported / total) + ", \"ratePerSecond\": 1.0, \"exportedPositions\": "
            + exported + ", \"totalPositions\": " + total + ", \"ranges\": [{\"partitionId\": 2, \"fromPosition\": 1, "
            + "\"toPosition\": " + total + "}], \"tasks\": [{\"taskId\": 0, \"partitionId\": 2, \"state\": \"" + state
            + "\", \"fromPosition\": 1, \"toPosition\": " + total + ", \"exportedUpTo\": " + exported
            + ", \"attempts\": 1, \"progress\": " + ((double)exported / total) + "}], \"unavailablePartitions\": []}";
    }
}
