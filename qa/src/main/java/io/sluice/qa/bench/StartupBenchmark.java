package io.sluice.qa.bench;

import io.sluice.qa.cluster.ClassDataSharing;
import io.sluice.qa.cluster.SluiceCluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * How quickly a broker is back (issue 30): a running cluster of separate JVMs (3 brokers × 64 partitions × RF 3, a
 * gateway), one broker stopped with SIGTERM and started again, timed from its process start to
 * <ol>
 *   <li>{@code listening}: its command port accepts a connection;</li>
 *   <li>{@code reachable}: the gateway's {@code GET /actuator/partitions} says it is reachable;</li>
 *   <li>{@code available}: every pair of it reports a known exporting state in {@code GET /actuator/exporting} (its
 *   control group replica caught up, its exporters following it);</li>
 *   <li>{@code caught_up}: every replica of it is at its leader's last position (what was written while it was
 *   down has reached it).</li>
 * </ol>
 * Also its Raft side: {@code raft_listening} (its Raft port accepts a connection) and {@code raft_caught_up} (every
 * group's leader has heard from it since the restart and knows it holds the leader's last entry, {@link RaftCatchUp}),
 * and what it logged: the Spring context's start, its start phases' {@code raft_started} and {@code serving}.
 * <p>
 * Baseline in the same run (issue 30): after the broker's restarts it is stopped once more and a bare Ratis server
 * ({@link BareRatisServer}, its own JVM with the brokers' JVM options) is started as many times in its place, on a copy
 * of the broker's data directory, timed the same way to {@code bare_raft_listening} and {@code bare_raft_caught_up}.
 * Headline ratio = raft_caught_up / bare_raft_caught_up (p50s).
 */
public final class StartupBenchmark
{
    private static final int BROKERS = 3;
    private static final int RESTARTED = 1;
    private static final int REPLICATION_FACTOR = 3;
    private static final java.util.List<String> JVM_OPTIONS = java.util.List.of("-Xms128m", "-Xmx512m", "-Xshare:auto");
    private static final Duration TIMEOUT = Duration.ofMinutes(3);
    /** The Sluice restart's figures, in the order {@code measure} collects them. */
    private static final String[] SLUICE_FIGURES = {"listening", "reachable", "available", "caught_up", "raft_listening",
        "raft_caught_up", "raft_started", "serving"};

    private StartupBenchmark()
    {
    }

    public static void main(final String[] args)
    {
        BenchmarkRun.runAndExit("startup", args, StartupBenchmark::measure);
    }

    private static void measure(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start("startup", args);
        if (System.getProperty(SluiceCluster.JAR_PROPERTY) == null)
        {
            System.setProperty(SluiceCluster.JAR_PROPERTY, "dist/target/sluice.jar"); // bench.sh runs from the root
        }
        System.setProperty(ClassDataSharing.ENABLED_PROPERTY, "false");
        final int partitions = run.choose("partitions", 16, 64);
        final int restarts = run.choose("restarts", 1, 3);
        run.param("brokers", BROKERS).param("replication_factor", REPLICATION_FACTOR).param("restarted_broker", RESTARTED)
            .param("jvm_options", String.join(" ", JVM_OPTIONS));

        final Path dir = Files.createTempDirectory("sluice-startup-bench");
        try (SluiceCluster cluster = SluiceCluster.builder(dir).brokers(BROKERS).partitions(partitions)
            .replicationFactor(REPLICATION_FACTOR).jvmOptions(JVM_OPTIONS).build())
        {
            cluster.start();
            cluster.awaitReady();
            cluster.awaitLeaders();
            for (int b = 0; b < BROKERS; b++)
            {
                cluster.awaitBrokerAvailable(b);
            }
            final long[][] sluice = new long[SLUICE_FIGURES.length][restarts];
            final double[] springSeconds = new double[restarts];
            final long[] balancedNs = new long[restarts];
            final BrokerJoin join = new BrokerJoin(cluster, RESTARTED, TIMEOUT);
            for (int i = 0; i < restarts; i++)
            {
                final BrokerJoin.Times times = join.restart(() -> { });
                final long[] figures = {times.listeningNs(), times.reachableNs(), times.availableNs(), times.caughtUpNs(),
                    times.raftListeningNs(), times.raftCaughtUpNs(), times.raftStartedMs() * 1_000_000,
                    times.servingMs() * 1_000_000};
                for (int f = 0; f < figures.length; f++)
                {
                    sluice[f][i] = figures[f];
                }
                springSeconds[i] = times.springSeconds();
                run.log("restart %d: listening %.2f s, serving %.2f s (as logged), reachable %.2f s, available %.2f s, " +
                    "caught up %.2f s; Raft: started %.2f s (as logged), listening %.2f s, every group caught up %.2f s " +
                    "(Spring context started in %.2f s)", i + 1, times.listeningNs() / 1e9, times.servingMs() / 1e3,
                    times.reachableNs() / 1e9, times.availableNs() / 1e9, times.caughtUpNs() / 1e9,
                    times.raftStartedMs() / 1e3, times.raftListeningNs() / 1e9, times.raftCaughtUpNs() / 1e9,
                    springSeconds[i]);
                // The next restart starts from a balanced cluster, as a rolling restart would; how long the
                // leaderships took to come home after the broker caught up is what a rolling restart waits on too.
                balancedNs[i] = cluster.awaitPreferredLeaders().toNanos();
            }
            for (int f = 0; f < SLUICE_FIGURES.length; f++)
            {
                run.result(SLUICE_FIGURES[f] + "_p50_ms", Stats.percentile(sluice[f], 50) / 1e6)
                    .result(SLUICE_FIGURES[f] + "_max_ms", Stats.percentile(sluice[f], 100) / 1e6);
            }
            run.result("spring_context_p50_s", Stats.median(springSeconds))
                .result("preferred_leaders_after_caught_up_p50_ms", Stats.percentile(balancedNs, 50) / 1e6)
                .result("preferred_leaders_after_caught_up_max_ms", Stats.percentile(balancedNs, 100) / 1e6);

            // The baseline, same run, same cluster: a bare Ratis server in place of the stopped broker.
            final BareRatisJoin bare = new BareRatisJoin(cluster, RESTARTED, JVM_OPTIONS, dir.resolve("bare"), TIMEOUT);
            final long[][] baseline = new long[3][restarts];
            for (int i = 0; i < restarts; i++)
            {
                final BareRatisJoin.Times times = bare.restart();
                baseline[0][i] = times.listeningNs();
                baseline[1][i] = times.caughtUpNs();
                baseline[2][i] = times.startedMs() * 1_000_000;
                run.log("bare Ratis start %d: started %.2f s (as logged), listening %.2f s, every group caught up %.2f s",
                    i + 1, times.startedMs() / 1e3, times.listeningNs() / 1e9, times.caughtUpNs() / 1e9);
            }
            bare.stop();
            final String[] bareFigures = {"bare_raft_listening", "bare_raft_caught_up", "bare_raft_started"};
            for (int f = 0; f < bareFigures.length; f++)
            {
                run.result(bareFigures[f] + "_p50_ms", Stats.percentile(baseline[f], 50) / 1e6)
                    .result(bareFigures[f] + "_max_ms", Stats.percentile(baseline[f], 100) / 1e6);
            }
            final double listeningRatio = (double)Stats.percentile(sluice[0], 50) / Stats.percentile(baseline[0], 50);
            final double raftListeningRatio = (double)Stats.percentile(sluice[4], 50) / Stats.percentile(baseline[0], 50);
            final double caughtUpRatio = (double)Stats.percentile(sluice[5], 50) / Stats.percentile(baseline[1], 50);
            run.result("listening_vs_bare", listeningRatio)
                .result("raft_listening_vs_bare", raftListeningRatio)
                .result("raft_caught_up_vs_bare", caughtUpRatio);
            run.ratio(caughtUpRatio);
            // The restarted broker's log (every start appended) next to the report: its timestamps show where a start goes.
            final Path report = run.finish();
            Files.copy(cluster.broker(RESTARTED).logFile(), report.resolveSibling("startup-broker-" + RESTARTED + ".log"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            // And the gateway's: when it saw the broker reachable again, against the broker's "serving".
            Files.copy(cluster.gateway().logFile(), report.resolveSibling("startup-gateway.log"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            run.log("report: %s", report);
        }
        finally
        {
            SluiceCluster.deleteRecursively(dir);
        }
    }
}
