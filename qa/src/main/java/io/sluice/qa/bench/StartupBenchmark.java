package io.sluice.qa.bench;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.qa.cluster.ClassDataSharing;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.PairState;
import io.sluice.qa.cluster.SluiceCluster;
import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How quickly a broker is back (issue 30): a running cluster of separate JVMs (3 brokers × 64 partitions × RF 3, a
 * gateway), one broker stopped with SIGTERM and started again, timed from its process start to
 * <ol>
 *   <li>{@code listening}: its command port accepts a connection;</li>
 *   <li>{@code reachable}: the gateway's {@code GET /actuator/partitions} says it is reachable;</li>
 *   <li>{@code available}: every pair of it reports a known exporting state in {@code GET /actuator/exporting} (its
 *   control group replica caught up, its exporters following it).</li>
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
    private static final Pattern SPRING_STARTED = Pattern.compile("Started \\S+ in ([0-9.]+) seconds");

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
            final double[] springSeconds = new double[restarts];
            for (int i = 0; i < restarts; i++)
            {
                cluster.stopBroker(RESTARTED);
                awaitReachable(cluster, false);
                final long logBefore = Files.size(cluster.broker(RESTARTED).logFile());
                final long startNs = System.nanoTime();
                cluster.startBroker(RESTARTED);
                final InetSocketAddress command = cluster.brokerCommandAddress(RESTARTED);
                while (!accepts(command))
                {
                    deadline(startNs, "broker " + RESTARTED + " listening on " + command);
                    Thread.sleep(5);
                }
                listening[i] = System.nanoTime() - startNs;
                awaitReachable(cluster, true);
                reachable[i] = System.nanoTime() - startNs;
                while (!everyPairKnown(cluster))
                {
                    deadline(startNs, "every pair of broker " + RESTARTED + " known to the gateway");
                    Thread.sleep(20);
                }
                available[i] = System.nanoTime() - startNs;
                springSeconds[i] = springStarted(cluster.broker(RESTARTED).logFile(), logBefore);
                run.log("restart %d: listening %.2f s, reachable %.2f s, available %.2f s (Spring context started in %.2f s)",
                    i + 1, listening[i] / 1e9, reachable[i] / 1e9, available[i] / 1e9, springSeconds[i]);
                // The next restart starts from a balanced cluster, as a rolling restart would.
                cluster.awaitPreferredLeaders();
            }
            run.result("listening_p50_ms", Stats.percentile(listening, 50) / 1e6)
                .result("listening_max_ms", Stats.percentile(listening, 100) / 1e6)
                .result("reachable_p50_ms", Stats.percentile(reachable, 50) / 1e6)
                .result("reachable_max_ms", Stats.percentile(reachable, 100) / 1e6)
                .result("available_p50_ms", Stats.percentile(available, 50) / 1e6)
                .result("available_max_ms", Stats.percentile(available, 100) / 1e6)
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

    private static boolean accepts(final InetSocketAddress address)
    {
        try (Socket socket = new Socket())
        {
            socket.connect(address, 200);
            return true;
        }
        catch (final IOException e)
        {
            return false;
        }
    }

    private static void deadline(final long startNs, final String what)
    {
        if (System.nanoTime() - startNs > TIMEOUT.toNanos())
        {
            throw new IllegalStateException("not within " + TIMEOUT.toSeconds() + " s: " + what);
        }
    }

    private static void awaitReachable(final SluiceCluster cluster, final boolean wanted) throws InterruptedException
    {
        final long startNs = System.nanoTime();
        while (true)
        {
            final HttpAnswer answer = cluster.management("GET", "/actuator/partitions", null);
            if (answer.status() == 200)
            {
                for (final JsonNode broker : answer.json().path("brokers"))
                {
                    if (broker.path("brokerId").asInt(-1) == RESTARTED && broker.path("reachable").asBoolean(!wanted) == wanted)
                    {
                        return;
                    }
                }
            }
            deadline(startNs, "broker " + RESTARTED + (wanted ? " reachable" : " unreachable") + " in /actuator/partitions");
            Thread.sleep(20);
        }
    }

    private static boolean everyPairKnown(final SluiceCluster cluster)
    {
        final ExportingStatus status = cluster.client().exporting();
        for (final PartitionReplica pair : cluster.pairsOf(RESTARTED))
        {
            final Optional<PairState> state = status.pair(pair.brokerId(), pair.partitionId());
            if (state.isEmpty() || state.get().state() == null || "UNKNOWN".equals(state.get().state()))
            {
                return false;
            }
        }
        return true;
    }

    /** The Spring context's start in seconds, from the broker's log after {@code offset}; -1 when not found. */
    private static double springStarted(final Path log, final long offset) throws IOException
    {
        final String text = Files.readString(log);
        final Matcher matcher = SPRING_STARTED.matcher(text.substring((int)Math.min(offset, text.length())));
        return matcher.find() ? Double.parseDouble(matcher.group(1)) : -1;
    }
}
