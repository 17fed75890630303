package io.sluice.qa.operator;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.qa.Exporting;
import io.sluice.qa.LongRunning;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.Json;
import io.sluice.qa.cluster.PortAllocator;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 7: the operator CLI ({@code java -jar sluice.jar admin ...}, a separate process) against a cluster of
 * separate JVMs (3 brokers, 6 partitions, RF 3: 18 pairs), one exit code per way a call can end (CONTRACT §6):
 * 0 all succeeded, 1 some pairs failed, 2 some timed out, 3 refused, 4 no gateway. The gateway has a token, so
 * every CLI call here passes {@code --token} except the one that checks the 401. One cluster serves every case;
 * each starts from every broker up and exporting.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 8, unit = TimeUnit.MINUTES)
@LongRunning(seconds = 70)
class AdminCliExitCodesIT
{
    private static final String TOKEN = "qa-operator-token";
    /** Short for fast 504s; long enough that a loaded 2-core machine answers the reachable pairs before it. */
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(4);
    /**
     * The gateway counts a broker unreachable once a topology poll misses this deadline (1.5 s by default), and from
     * then on fails its pairs at once (exit 1) rather than waiting for them. The CLI's JVM takes seconds to start on
     * a loaded machine, so with the default a SIGSTOPped broker is always "unreachable" by the time the pause
     * arrives; a long poll deadline keeps it "reachable", as in the first moments of a hang, so the pause meets the
     * request timeout (504). A killed broker still refuses connections, so it is noticed at once either way.
     */
    private static final String TOPOLOGY_POLL_TIMEOUT = "120s";
    /** Backoff 2s doubling to the CLI's 30s cap: 8 retries wait 150 s in all, room for a broker restart. */
    private static final String RETRIES = "8";
    private static final String RETRY_BACKOFF = "2s";
    private static final Duration RETRYING_CALL_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(300));
    private static final Duration QUIET_PERIOD = Duration.ofSeconds(2);

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    private SluiceCluster cluster;
    private String gateway;
    private Path cliFolder;

    @BeforeAll
    void startCluster()
    {
        cluster = RUN.cluster("cluster", builder -> builder.token(TOKEN).requestTimeout(REQUEST_TIMEOUT)
            .gatewayProperty("sluice.gateway.topology-poll-timeout", TOPOLOGY_POLL_TIMEOUT));
        cluster.start();
        cluster.awaitReady();
        cluster.awaitPreferredLeaders(); // backfill starts ask each partition's leader
        gateway = cluster.client().managementBase().toString();
        cliFolder = RUN.directory().resolve("cli");
    }

    @BeforeEach
    void everyBrokerUpAndExporting()
    {
        Exporting.everyBrokerUpAndExporting(cluster);
    }

    @Test
    @Order(1)
    void pauseAndResumeExitZeroAndStatusShowsEveryPairsState()
    {
        final CliResult pause = admin("exporting", "pause", "--token", TOKEN);
        assertThat(pause.exitCode()).as("%s", pause).isEqualTo(0);
        assertThat(pause.stdout()).as("%s", pause).startsWith("pause: 18 succeeded, 0 failed, 0 timed out");
        assertThat(pause.pairsWithOutcome("SUCCEEDED")).as("%s", pause).isEqualTo(cluster.allPairs());

        Exporting.awaitClusterState(cluster, "PAUSED");
        final CliResult paused = admin("exporting", "status", "--token", TOKEN);
        assertThat(paused.exitCode()).as("%s", paused).isEqualTo(0);
        assertThat(paused.stdout()).as("%s", paused).startsWith("exporting: PAUSED");
        assertThat(paused.pairsInState("PAUSED")).as("%s", paused).isEqualTo(cluster.allPairs());

        final CliResult resume = admin("exporting", "resume", "--token", TOKEN);
        assertThat(resume.exitCode()).as("%s", resume).isEqualTo(0);
        assertThat(resume.pairsWithOutcome("SUCCEEDED")).as("%s", resume).isEqualTo(cluster.allPairs());

        Exporting.awaitClusterState(cluster, "EXPORTING");
        final CliResult exporting = admin("exporting", "status", "--output", "json");
        assertThat(exporting.exitCode()).as("status needs no token: %s", exporting).isEqualTo(0);
        final JsonNode json = Json.parse(exporting.stdout());
        assertThat(json.path("state").asString()).as("%s", exporting).isEqualTo("EXPORTING");
        assertThat(json.path("targets").size()).as("%s", exporting).isEqualTo(18);
    }

    @Test
    @Order(2)
    void pauseWithADeadBrokerExitsOneNamingItsPairsAndRetriesSucceedOnceItIsBack()
    {
        final int dead = 1;
        cluster.killBroker(dead);
        cluster.awaitLeaders();

        final CliResult pause = admin("exporting", "pause", "--token", TOKEN);
        assertThat(pause.exitCode()).as("%s", pause).isEqualTo(1);
        assertThat(pause.pairsWithOutcome("FAILED")).as("%s", pause).isEqualTo(cluster.pairsOf(dead));
        assertThat(pause.listedPairs()).as("%s", pause).isEqualTo(cluster.allPairs());
        assertThat(pause.stderr()).as("%s", pause).contains("admin: pause incomplete:");
        for (final PartitionReplica pair : cluster.pairsOf(dead))
        {
            assertThat(pause.stderr()).as("%s", pause)
                .contains("broker " + dead + " partition " + pair.partitionId() + " FAILED");
        }

        // The restart begins only once the first round has failed, so the success below is the retries' doing.
        final AdminCliProcess retrying = startAdmin(
            "exporting", "pause", "--token", TOKEN, "--retries", RETRIES, "--retry-backoff", RETRY_BACKOFF);
        retrying.awaitStderrContains("pause round 1/9:", AdminCliProcess.CALL_TIMEOUT);
        cluster.startBroker(dead);
        final CliResult retried = retrying.awaitExit(RETRYING_CALL_TIMEOUT);

        assertThat(retried.exitCode()).as("%s", retried).isEqualTo(0);
        assertThat(retried.stderr()).as("%s", retried).containsPattern("pause round 1/9: [^\\n]*; retrying \\[");
        assertThat(retried.pairsWithOutcome("SUCCEEDED")).as("%s", retried).isEqualTo(cluster.allPairs());
        Exporting.awaitClusterState(cluster, "PAUSED");
    }

    @Test
    @Order(3)
    void pauseWithAStoppedBrokerExitsTwo()
    {
        final int stopped = 2;
        cluster.suspendBroker(stopped);
        final CliResult pause;
        try
        {
            pause = admin("exporting", "pause", "--token", TOKEN);
        }
        finally
        {
            cluster.resumeBroker(stopped);
        }
        assertThat(pause.exitCode()).as("%s", pause).isEqualTo(2);
        assertThat(pause.elapsed()).as("%s", pause).isGreaterThanOrEqualTo(REQUEST_TIMEOUT);
        assertThat(pause.pairsWithOutcome("TIMED_OUT")).as("%s", pause).containsAll(cluster.pairsOf(stopped));
        assertThat(pause.pairsWithOutcome("FAILED")).as("%s", pause).isEmpty();
        assertThat(pause.stderr()).as("%s", pause).contains("admin: pause incomplete:");
    }

    @Test
    @Order(4)
    void callsWithoutTheTokenExitThreeAndChangeNothing()
    {
        for (final String action : List.of("pause", "resume"))
        {
            final CliResult refused = admin("exporting", action);
            assertThat(refused.exitCode()).as("%s", refused).isEqualTo(3);
            assertThat(refused.stderr()).as("%s", refused).contains("HTTP 401");
        }
        final CliResult softRefused = admin("exporting", "pause", "--soft", "--token", "not-" + TOKEN);
        assertThat(softRefused.exitCode()).as("%s", softRefused).isEqualTo(3);
        assertThat(softRefused.stderr()).as("%s", softRefused).contains("HTTP 401");

        Await.quietPeriod("the gateway polls its brokers: a wrong pause gets time to show", QUIET_PERIOD);
        assertThat(cluster.client().exporting().state()).isEqualTo("EXPORTING");
    }

    @Test
    @Order(5)
    void badArgumentsExitThreeAndChangeNothing()
    {
        final CliResult zeroTasks = admin("backfill", "start", "file", "--tasks", "0", "--token", TOKEN);
        assertThat(zeroTasks.exitCode()).as("%s", zeroTasks).isEqualTo(3);
        assertThat(zeroTasks.stderr()).as("%s", zeroTasks).contains("--tasks must be 1 or more, was 0");

        final CliResult unknownOption = admin("exporting", "pause", "--token", TOKEN, "--everything");
        assertThat(unknownOption.exitCode()).as("%s", unknownOption).isEqualTo(3);
        assertThat(unknownOption.stderr()).as("%s", unknownOption).contains("--everything");

        final CliResult badPair = admin("exporting", "pause", "--token", TOKEN, "--target", "1:x");
        assertThat(badPair.exitCode()).as("%s", badPair).isEqualTo(3);
        assertThat(badPair.stderr()).as("%s", badPair).contains("'1:x'");

        // A pair outside the distribution gets past the CLI and is refused by the gateway with 400.
        final CliResult foreignPair = admin("exporting", "pause", "--token", TOKEN, "--target", "7:1");
        assertThat(foreignPair.exitCode()).as("%s", foreignPair).isEqualTo(3);
        assertThat(foreignPair.stderr()).as("%s", foreignPair).contains("HTTP 400");

        Await.quietPeriod("the gateway polls its brokers: a wrong pause gets time to show", QUIET_PERIOD);
        assertThat(cluster.client().exporting().state()).isEqualTo("EXPORTING");
    }

    @Test
    @Order(6)
    void noGatewayListeningExitsFour()
    {
        final String nowhere = "http://127.0.0.1:" + PortAllocator.freePort();
        for (final List<String> command : List.of(List.of("exporting", "pause"), List.of("exporting", "status")))
        {
            final String[] args = concat(command, "--gateway", nowhere, "--token", TOKEN, "--timeout", "5s");
            final CliResult unreachable = AdminCliProcess.run(cliFolder, args);
            assertThat(unreachable.exitCode()).as("%s", unreachable).isEqualTo(4);
            assertThat(unreachable.stderr()).as("%s", unreachable).contains("gateway unreachable");
        }
    }

    /** Runs {@code admin args... --gateway <this cluster's>} to its end. */
    private CliResult admin(final String... args)
    {
        return startAdmin(args).awaitExit(AdminCliProcess.CALL_TIMEOUT);
    }

    private AdminCliProcess startAdmin(final String... args)
    {
        return AdminCliProcess.start(cliFolder, concat(List.of(args), "--gateway", gateway));
    }

    private static String[] concat(final List<String> head, final String... tail)
    {
        final String[] all = new String[head.size() + tail.length];
        for (int i = 0; i < head.size(); i++)
        {
            all[i] = head.get(i);
        }
        System.arraycopy(tail, 0, all, head.size(), tail.length);
        return all;
    }
}
