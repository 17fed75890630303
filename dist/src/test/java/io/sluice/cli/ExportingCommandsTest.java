package io.sluice.cli;

import io.sluice.protocol.cluster.PartitionReplica;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(60)
class ExportingCommandsTest
{
    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private FakeGateway gateway;
    private FakeExportingCluster cluster;

    @BeforeEach
    void startGateway() throws IOException
    {
        gateway = FakeGateway.start();
        cluster = new FakeExportingCluster(3, 2, 3);
        cluster.installOn(gateway);
    }

    @AfterEach
    void stopGateway()
    {
        gateway.close();
    }

    @Test
    void pauseExitsZeroWhenEveryPairSucceeded()
    {
        final CliRun run = CliRun.run("exporting", "pause", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(run.out()).contains("pause: 6 succeeded, 0 failed, 0 timed out").contains("0:1").contains("2:2");
        final List<FakeGateway.Request> posts = gateway.requests("POST", "/actuator/exporting/pause");
        assertThat(posts).hasSize(1);
        // Like a plain curl -X POST: no body, no content type, no soft flag.
        assertThat(posts.get(0).body()).isEmpty();
        assertThat(posts.get(0).header("Content-Type")).isNull();
        assertThat(posts.get(0).query()).isNull();
        cluster.pairs().forEach(pair -> assertThat(cluster.state(pair)).isEqualTo("PAUSED"));
    }

    @Test
    void aPauseWithALeaseAsksTheGatewayForIt()
    {
        final CliRun run = CliRun.run("exporting", "pause", "--soft", "--lease", "PT30M", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(gateway.requests("POST", "/actuator/exporting/pause").get(0).query()).isEqualTo("soft=true&lease=PT30M");
    }

    @Test
    void softPauseAsksForSoftTrue()
    {
        final CliRun run = CliRun.run("exporting", "pause", "--soft", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(gateway.requests("POST", "/actuator/exporting/pause").get(0).query()).isEqualTo("soft=true");
        cluster.pairs().forEach(pair -> assertThat(cluster.state(pair)).isEqualTo("SOFT_PAUSED"));
    }

    @Test
    void resumeExitsZeroAndResumesEveryPair()
    {
        final CliRun run = CliRun.run("exporting", "resume", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(gateway.requests("POST", "/actuator/exporting/resume")).hasSize(1);
    }

    @Test
    void pauseExitsOneAndNamesThePairWhenABrokerFailed()
    {
        cluster.script(new PartitionReplica(2, 1), "FAILED");

        final CliRun run = CliRun.run("exporting", "pause", "--gateway", gateway.url());

        assertThat(run.exitCode()).isEqualTo(ExitCode.FAILED);
        assertThat(run.out()).contains("5 succeeded, 1 failed, 0 timed out");
        assertThat(run.err())
            .contains("broker 2 partition 1 FAILED: broker 2 unreachable")
            .contains("--retries");
        assertThat(run.err().lines().count()).isEqualTo(1);
    }

    @Test
    void pauseExitsTwoWhenAPairTimedOutAndNoneFailed()
    {
        cluster.script(new PartitionReplica(0, 2), "TIMED_OUT");

        final CliRun run = CliRun.run("exporting", "pause", "--gateway", gateway.url());

        assertThat(run.exitCode()).isEqualTo(ExitCode.TIMED_OUT);
        assertThat(run.err()).contains("broker 0 partition 2 TIMED_OUT");
    }

    @Test
    void failedBeatsTimedOut()
    {
        cluster.script(new PartitionReplica(0, 2), "TIMED_OUT").script(new PartitionReplica(1, 2), "FAILED");

        assertThat(CliRun.run("exporting", "pause", "--gateway", gateway.url()).exitCode()).isEqualTo(ExitCode.FAILED);
    }

    @Test
    void retriesSendOnlyTheFailedPairsAndEndZeroWhenTheSecondRoundSucceeds()
    {
        cluster.script(new PartitionReplica(2, 1), "FAILED").script(new PartitionReplica(0, 2), "TIMED_OUT");

        final CliRun run = CliRun.run("exporting", "pause", "--retries", "3", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        final List<FakeGateway.Request> posts = gateway.requests("POST", "/actuator/exporting/pause");
        assertThat(posts).hasSize(2);
        assertThat(posts.get(0).body()).isEmpty();
        final JsonNode retryBody = MAPPER.readTree(posts.get(1).body());
        assertThat(retryBody.path("targets")).hasSize(2);
        assertThat(retryBody.path("targets").toString())
            .contains("{\"brokerId\":2,\"partitionId\":1}")
            .contains("{\"brokerId\":0,\"partitionId\":2}");
        assertThat(posts.get(1).header("Content-Type")).startsWith("application/json");
        assertThat(run.sleeps()).containsExactly(Duration.ofSeconds(1));
        // One line per round on stderr, the final table on stdout.
        assertThat(run.err().lines()).hasSize(2);
        assertThat(run.err()).contains("round 1/4: 4 succeeded, 1 failed, 1 timed out; retrying [2:1, 0:2]")
            .contains("round 2/4: 6 succeeded, 0 failed, 0 timed out");
        assertThat(run.out()).contains("6 succeeded, 0 failed, 0 timed out");
        cluster.pairs().forEach(pair -> assertThat(cluster.state(pair)).isEqualTo("PAUSED"));
    }

    @Test
    void retriesBackOffExponentiallyAndEndWithTheFinalStateOfAllPairs()
    {
        cluster.script(new PartitionReplica(2, 1), "FAILED", "FAILED", "FAILED", "FAILED")
            .script(new PartitionReplica(0, 2), "TIMED_OUT");

        final CliRun run = CliRun.run(
            "exporting", "resume", "--retries", "3", "--retry-backoff", "500ms", "--gateway", gateway.url());

        assertThat(run.exitCode()).isEqualTo(ExitCode.FAILED);
        assertThat(run.sleeps()).containsExactly(Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2));
        final List<FakeGateway.Request> posts = gateway.requests("POST", "/actuator/exporting/resume");
        assertThat(posts).hasSize(4);
        assertThat(MAPPER.readTree(posts.get(2).body()).path("targets")).hasSize(1);
        assertThat(run.err()).contains("round 4/4: 5 succeeded, 1 failed, 0 timed out; no retries left");
    }

    @Test
    void timedOutPairsThatSucceedOnRetryEndZero()
    {
        cluster.script(new PartitionReplica(0, 2), "TIMED_OUT", "TIMED_OUT");

        final CliRun run = CliRun.run("exporting", "pause", "--retries", "2", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(gateway.requests("POST", "/actuator/exporting/pause")).hasSize(3);
    }

    @Test
    void targetOptionActsOnThosePairsOnly()
    {
        final CliRun run = CliRun.run(
            "exporting", "resume", "--target", "2:2", "--target", "1:1", "--target", "2:2", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        final FakeGateway.Request post = gateway.requests("POST", "/actuator/exporting/resume").get(0);
        assertThat(MAPPER.readTree(post.body()).toString())
            .isEqualTo("{\"targets\":[{\"brokerId\":1,\"partitionId\":1},{\"brokerId\":2,\"partitionId\":2}]}");
    }

    @Test
    void targetOutsideTheClusterIsRefusedWithExitThree()
    {
        final CliRun run = CliRun.run("exporting", "pause", "--target", "9:1", "--retries", "3", "--gateway", gateway.url());

        assertThat(run.exitCode()).isEqualTo(ExitCode.REFUSED);
        assertThat(run.err()).contains("HTTP 400").contains("broker 9 does not host partition 1");
        assertThat(gateway.requests("POST", "/actuator/exporting/pause")).hasSize(1);
    }

    @Test
    void jsonOutputPrintsTheGatewaysAnswer()
    {
        cluster.script(new PartitionReplica(2, 1), "FAILED");

        final CliRun run = CliRun.run("exporting", "pause", "--output", "json", "--gateway", gateway.url());

        assertThat(run.exitCode()).isEqualTo(ExitCode.FAILED);
        final JsonNode answer = MAPPER.readTree(run.out());
        assertThat(answer.path("operation").asString()).isEqualTo("PAUSE");
        assertThat(answer.path("result").asString()).isEqualTo("FAILED");
        assertThat(answer.path("targets")).hasSize(6);
    }

    @Test
    void jsonOutputAfterRetriesMergesTheRoundsIntoOneAnswer()
    {
        cluster.script(new PartitionReplica(2, 1), "FAILED");

        final CliRun run = CliRun.run("exporting", "pause", "-o", "JSON", "--retries", "1", "--gateway", gateway.url());

        assertThat(run.exitCode()).isEqualTo(ExitCode.SUCCEEDED);
        final JsonNode answer = MAPPER.readTree(run.out());
        assertThat(answer.path("result").asString()).isEqualTo("SUCCEEDED");
        assertThat(answer.path("targets")).hasSize(6);
        answer.path("targets").forEach(target -> assertThat(target.path("outcome").asString()).isEqualTo("SUCCEEDED"));
    }

    @Test
    void statusPrintsEveryPairWithItsLag()
    {
        CliRun.run("exporting", "pause", "--gateway", gateway.url());

        final CliRun run = CliRun.run("exporting", "status", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(run.out()).startsWith("exporting: PAUSED").contains("PAIR").contains("LAG");
        assertThat(run.out().lines().filter(line -> line.contains("PAUSED") && line.contains("40"))).hasSize(6);
    }

    @Test
    void statusDuringASoftPauseShowsTheAcknowledgedPositionEverywhereAndTheSentOneOnTheLeaders()
    {
        CliRun.run("exporting", "pause", "--soft", "--gateway", gateway.url());

        final CliRun run = CliRun.run("exporting", "status", "--gateway", gateway.url());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCode.SUCCEEDED);
        final List<String> lines = run.out().lines().toList();
        assertThat(lines.get(1)).matches("PAIR\\s+ROLE\\s+STATE\\s+POSITION\\s+SENT\\s+LAST\\s+LAG\\s+SENT LAG");
        assertThat(lines).filteredOn(line -> line.contains("LEADER")).isNotEmpty()
            .allMatch(line -> line.matches(".*LEADER\\s+SOFT_PAUSED\\s+100\\s+130\\s+140\\s+40\\s+10"), "leader rows");
        assertThat(lines).filteredOn(line -> line.contains("FOLLOWER")).isNotEmpty()
            .allMatch(line -> line.matches(".*FOLLOWER\\s+SOFT_PAUSED\\s+100\\s+-\\s+140\\s+40\\s+-"), "follower rows");
    }

    @Test
    void unauthorisedCallExitsThreeAndSaysHowToPassTheToken()
    {
        gateway.on("POST", "/actuator/exporting/pause",
            request -> "Bearer s3cret".equals(request.header("Authorization"))
                ? FakeGateway.Reply.json(200, "{\"operation\":\"PAUSE\",\"result\":\"SUCCEEDED\",\"targets\":[]}")
                : FakeGateway.Reply.error(401, "Unauthorized", "missing or wrong bearer token"));

        final CliRun refused = CliRun.run("exporting", "pause", "--gateway", gateway.url());
        assertThat(refused.exitCode()).isEqualTo(ExitCode.REFUSED);
        assertThat(refused.err()).contains("HTTP 401").contains("--token");

        final CliRun withOption = CliRun.run("exporting", "pause", "--token", "s3cret", "--gateway", gateway.url());
        assertThat(withOption.exitCode()).as(withOption.err()).isEqualTo(ExitCode.SUCCEEDED);

        final CliRun withEnvironment = CliRun.run(
            Map.of("SLUICE_TOKEN", "s3cret", "SLUICE_GATEWAY", gateway.url()), false, "exporting", "pause");
        assertThat(withEnvironment.exitCode()).as(withEnvironment.err()).isEqualTo(ExitCode.SUCCEEDED);
    }

    @Test
    void badArgumentsExitThreeWithoutCallingTheGateway()
    {
        assertThat(CliRun.run("exporting", "pause", "--retries", "x", "--gateway", gateway.url()).exitCode())
            .isEqualTo(ExitCode.REFUSED);
        assertThat(CliRun.run("exporting", "pause", "--retries", "-1", "--gateway", gateway.url()).exitCode())
            .isEqualTo(ExitCode.REFUSED);
        assertThat(CliRun.run("exporting", "pause", "--target", "1-4", "--gateway", gateway.url()).exitCode())
            .isEqualTo(ExitCode.REFUSED);
        assertThat(CliRun.run("exporting", "pause", "--timeout", "soon", "--gateway", gateway.url()).exitCode())
            .isEqualTo(ExitCode.REFUSED);
        assertThat(CliRun.run("exporting", "pause", "--output", "xml", "--gateway", gateway.url()).exitCode())
            .isEqualTo(ExitCode.REFUSED);
        assertThat(CliRun.run("exporting", "pause", "--gateway", "not a url").exitCode()).isEqualTo(ExitCode.REFUSED);
        assertThat(CliRun.run("exporting", "stop").exitCode()).isEqualTo(ExitCode.REFUSED);
        assertThat(CliRun.run("exporting").exitCode()).isEqualTo(ExitCode.REFUSED);
        assertThat(CliRun.run().exitCode()).isEqualTo(ExitCode.REFUSED);
        assertThat(gateway.requests()).isEmpty();

        final CliRun run = CliRun.run("exporting", "pause", "--bogus");
        assertThat(run.err()).contains("--bogus").contains("--help");
    }

    @Test
    void helpExitsZero()
    {
        final CliRun run = CliRun.run("exporting", "pause", "--help");

        assertThat(run.exitCode()).isEqualTo(ExitCode.SUCCEEDED);
        assertThat(run.out()).contains("--soft").contains("--retries").contains("--gateway").contains("--token");
    }

    @Test
    void nothingListeningExitsFour() throws IOException
    {
        final int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            port = socket.getLocalPort();
        }

        final CliRun run = CliRun.run("exporting", "pause", "--gateway", "http://127.0.0.1:" + port);

        assertThat(run.exitCode()).isEqualTo(ExitCode.UNREACHABLE);
        assertThat(run.err()).contains("gateway unreachable").contains("127.0.0.1:" + port).contains("--gateway");
        assertThat(run.err().lines().count()).isEqualTo(1);
    }

    @Test
    void unreachableGatewayIsRetriedAsAWhole() throws IOException
    {
        final int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            port = socket.getLocalPort();
        }

        final CliRun run = CliRun.run("exporting", "resume", "--retries", "2", "--gateway", "http://127.0.0.1:" + port);

        assertThat(run.exitCode()).isEqualTo(ExitCode.UNREACHABLE);
        assertThat(run.sleeps()).hasSize(2);
        assertThat(run.err().lines().filter(line -> line.contains("gateway unreachable"))).hasSize(3);
    }

    @Test
    void unansweredCallExitsFourAtTheTimeout()
    {
        gateway.on("GET", "/actuator/exporting", FakeGateway.Reply.json(200, "{}").after(Duration.ofSeconds(5)));

        final long start = System.nanoTime();
        final CliRun run = CliRun.run("exporting", "status", "--timeout", "300ms", "--gateway", gateway.url());

        assertThat(run.exitCode()).isEqualTo(ExitCode.UNREACHABLE);
        assertThat(run.err()).contains("no answer within 300ms");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
    }
}
