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
 * Also the Spring context's own start as the broker logs it. Headline ratio = available / listening. No bare-Ratis
 * baseline yet (issue 30 asks for one): the figures stand alone.
 */
public final class StartupBenchmark
{
    private static final int BROKERS = 3;
    private static final int RESTARTED = 1;
    private static final int REPLICATION_FACTOR = 3;
    private static final java.util.List<String> JVM_OPTIONS = java.util.List.of("-Xms128m", "-Xmx512m", "-Xshare:auto");
    private static final Duration TIMEOUT = Duration.ofMinutes(3);

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
            final long[] listening = new long[restarts];
            final long[] reachable = new long[restarts];
            final long[] available = new long[restarts];
            final long[] caughtUp = new long[restarts];
            final double[] springSeconds = new double[restarts];
            final BrokerJoin join = new BrokerJoin(cluster, RESTARTED, TIMEOUT);
            for (int i = 0; i < restarts; i++)
            {
                final BrokerJoin.Times times = join.restart(() -> { });
                listening[i] = times.listeningNs();
                reachable[i] = times.reachableNs();
                available[i] = times.availableNs();
                caughtUp[i] = times.caughtUpNs();
                springSeconds[i] = times.springSeconds();
                run.log("restart %d: listening %.2f s, reachable %.2f s, available %.2f s, caught up %.2f s (Spring context " +
                    "started in %.2f s)", i + 1, listening[i] / 1e9, reachable[i] / 1e9, available[i] / 1e9,
                    caughtUp[i] / 1e9, springSeconds[i]);
                // The next restart starts from a balanced cluster, as a rolling restart would.
                cluster.awaitPreferredLeaders();
            }
            run.result("listening_p50_ms", Stats.percentile(listening, 50) / 1e6)
                .result("listening_max_ms", Stats.percentile(listening, 100) / 1e6)
                .result("reachable_p50_ms", Stats.percentile(reachable, 50) / 1e6)
                .result("reachable_max_ms", Stats.percentile(reachable, 100) / 1e6)
                .result("available_p50_ms", Stats.percentile(available, 50) / 1e6)
                .result("available_max_ms", Stats.percentile(available, 100) / 1e6)
                .result("caught_up_p50_ms", Stats.percentile(caughtUp, 50) / 1e6)
                .result("caught_up_max_ms", Stats.percentile(caughtUp, 100) / 1e6)
                .result("spring_context_p50_s", Stats.median(springSeconds));
            run.ratio((double)Stats.percentile(available, 50) / Stats.percentile(listening, 50));
            // The restarted broker's log (every start appended) next to the report: its timestamps show where a start goes.
            final Path report = run.finish();
            Files.copy(cluster.broker(RESTARTED).logFile(), report.resolveSibling("startup-broker-" + RESTARTED + ".log"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            run.log("report: %s", report);
        }
        finally
        {
            SluiceCluster.deleteRecursively(dir);
        }
    }
}
