package io.sluice.qa.bench;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ClassDataSharing;
import io.sluice.qa.cluster.RollingRestart;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WriteLoad;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * How long writers wait during a rolling restart (issue 32): a cluster of separate broker JVMs and a gateway, 3
 * brokers × 12 partitions, each broker in turn stopped by SIGTERM (controlled shutdown) and started again, under the
 * schedule of the rolling-restart qa test ({@link RollingRestart}). Measured twice in one run, each on a fresh
 * cluster: writers of one record a write, then writers of batches whose keys span partitions (a batch waits for its
 * slowest partition). Per load: the longest and the p99/p50 gaps between two acknowledged writes of one writer,
 * failed writes, writes (per round in a full run, which rolls twice). Headline ratio = longest gap of the batches /
 * longest gap of single records, each the longest of all rounds.
 */
public final class RollingRestartBenchmark
{
    private static final int PARTITIONS = 12;
    private static final int WRITERS = 3;

    private RollingRestartBenchmark()
    {
    }

    public static void main(final String[] args)
    {
        BenchmarkRun.runAndExit("rolling-restart", args, RollingRestartBenchmark::measure);
    }

    private static void measure(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start("rolling-restart", args);
        if (System.getProperty(SluiceCluster.JAR_PROPERTY) == null)
        {
            System.setProperty(SluiceCluster.JAR_PROPERTY, "dist/target/sluice.jar"); // bench.sh runs from the root
        }
        System.setProperty(ClassDataSharing.ENABLED_PROPERTY, "false");
        final int rounds = run.choose("rounds", 1, 2);
        run.param("partitions", PARTITIONS).param("writers", WRITERS).param("batch", RollingRestart.BATCH_SIZE)
            .param("batch_pause_ms", RollingRestart.BATCH_PAUSE.toMillis())
            .param("down_for_ms", RollingRestart.DOWN_FOR.toMillis());

        long singleLongest = 0;
        long batchLongest = 0;
        for (int round = 0; round < rounds; round++)
        {
            final String suffix = rounds == 1 ? "" : "_round" + (round + 1);
            singleLongest = Math.max(singleLongest, rollUnder(run, "single" + suffix, 1, Duration.ZERO));
            batchLongest = Math.max(batchLongest,
                rollUnder(run, "batch" + suffix, RollingRestart.BATCH_SIZE, RollingRestart.BATCH_PAUSE));
        }
        run.result("single_longest_gap_ms", singleLongest).result("batch_longest_gap_ms", batchLongest);
        run.ratio(singleLongest == 0 ? 0 : (double)batchLongest / singleLongest);
        run.log("report: %s", run.finish());
    }

    /** One rolling restart under one load on a fresh cluster; returns the longest gap. */
    private static long rollUnder(final BenchmarkRun run, final String load, final int batchSize, final Duration pause)
        throws Exception
    {
        final Path dir = Files.createTempDirectory("sluice-rolling-bench");
        try (SluiceCluster cluster = SluiceCluster.builder(dir).partitions(PARTITIONS).build())
        {
            cluster.start();
            cluster.awaitReady();
            cluster.awaitLeaders();
            RollingRestart.awaitBalanced(cluster, SluiceCluster.scaled(Duration.ofSeconds(90)), "before the roll");
            final List<RollingRestart.Stop> stops;
            try (WriteLoad writers = new WriteLoad(cluster, load, WRITERS, batchSize, pause, Duration.ofMinutes(15)))
            {
                Await.sleep(Duration.ofSeconds(3));
                stops = RollingRestart.roll(cluster, SluiceCluster.scaled(Duration.ofSeconds(90)));
                Await.sleep(Duration.ofSeconds(3));
                writers.stop();
                final long longest = writers.longestGapMs();
                run.result(load + "_longest_gap_ms", longest);
                run.result(load + "_p99_gap_ms", writers.gapQuantileMs(0.99));
                run.result(load + "_p50_gap_ms", writers.gapQuantileMs(0.50));
                run.result(load + "_failed_writes", writers.failures().size());
                run.result(load + "_writes", writers.writes());
                run.result(load + "_longest_shutdown_ms",
                    stops.stream().mapToLong((s) -> s.shutdown().toMillis()).max().orElse(0));
                run.result(load + "_longest_balance_after_restart_ms",
                    stops.stream().mapToLong((s) -> s.balancedAfterStart().toMillis()).max().orElse(0));
                run.log("%s (%d records a write): %d writes, %d failed; gaps longest %d ms, p99 %d ms, p50 %d ms; " +
                        "over 300 ms: %s", load, batchSize, writers.writes(), writers.failures().size(), longest,
                    writers.gapQuantileMs(0.99), writers.gapQuantileMs(0.50), writers.longGaps(300));
                return longest;
            }
        }
        finally
        {
            SluiceCluster.deleteRecursively(dir);
        }
    }
}
