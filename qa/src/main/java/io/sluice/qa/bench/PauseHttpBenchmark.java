package io.sluice.qa.bench;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.qa.cluster.ClassDataSharing;
import io.sluice.qa.cluster.GatewayClient;
import io.sluice.qa.cluster.SluiceCluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What an operator's backup job meets (issue 30): {@code POST /actuator/exporting/pause} and {@code resume} over HTTP
 * from this process to a gateway JVM, with 3 broker JVMs, 3 × 48 partitions × RF 3 = 144 pairs (the qa cluster
 * harness, production JVM options rather than the tests' fast-start ones).
 * <p>
 * Figures: the first pause of all pairs after the cluster is ready (and its resume), then after warm-up rounds,
 * rounds of pause all / resume all / pause one pair / resume one pair, p50 and p90 of each. Headline ratio = p50(pause
 * all) / p50(pause one pair).
 * <p>
 * Where the time goes, for pauses of all pairs: the gateway's own fan-out timer ({@code sluice_exporting_operation_seconds},
 * scraped around each measured pause) against the HTTP call around it (the difference: HTTP, JSON, answer assembly), and the
 * brokers' DEBUG spans (ExportingControl): the control group commit of the proposing broker, and per broker from a
 * pair's request arriving to its replica applying the operation and to its exporters obeying (each the latest pair of
 * the broker, p50 over operations). The floor: one control commit plus one loopback HTTP round trip
 * ({@code GET /actuator/health/liveness}), both measured in this run.
 */
public final class PauseHttpBenchmark
{
    private static final int BROKERS = 3;
    private static final int PARTITIONS = 48;
    private static final int REPLICATION_FACTOR = 3;
    /** What an operator's broker and gateway run with, sized for 4 JVMs on a small machine (no tests' C1-only JIT). */
    private static final List<String> JVM_OPTIONS = List.of("-Xms128m", "-Xmx512m", "-Xshare:auto");

    private PauseHttpBenchmark()
    {
    }

    public static void main(final String[] args)
    {
        BenchmarkRun.runAndExit("pause-http", args, PauseHttpBenchmark::measure);
    }

    private static void measure(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start("pause-http", args);
        if (System.getProperty(SluiceCluster.JAR_PROPERTY) == null)
        {
            System.setProperty(SluiceCluster.JAR_PROPERTY, "dist/target/sluice.jar"); // bench.sh runs from the root
        }
        System.setProperty(ClassDataSharing.ENABLED_PROPERTY, "false");
        final int warmup = run.choose("warmup_rounds", 3, 20);
        final int rounds = run.choose("rounds", 5, 20);
        final List<String> jvmOptions = run.childJvmOptions(JVM_OPTIONS);
        run.param("brokers", BROKERS).param("partitions", PARTITIONS).param("replication_factor", REPLICATION_FACTOR)
            .param("pairs", BROKERS * PARTITIONS);

        final Path dir = Files.createTempDirectory("sluice-pause-http-bench");
        try (SluiceCluster cluster = SluiceCluster.builder(dir).brokers(BROKERS).partitions(PARTITIONS)
            .replicationFactor(REPLICATION_FACTOR).jvmOptions(jvmOptions)
            .brokerProperty(ExportingSpans.SPAN_LOGGER, "DEBUG").build())
        {
            final long startNs = System.nanoTime();
            cluster.start();
            cluster.awaitReady();
            cluster.awaitLeaders();
            cluster.awaitPreferredLeaders();
            run.log("cluster of %d brokers, %d partitions ready in %.1f s", BROKERS, PARTITIONS,
                (System.nanoTime() - startNs) / 1e9);
            final GatewayClient gateway = cluster.client();
            final List<PartitionReplica> pairs = new ArrayList<>(cluster.allPairs());

            final double firstFanoutBefore = PauseRounds.fanoutSeconds(gateway);
            final long firstPause = PauseRounds.timed(gateway.exportingControl("pause", null), pairs.size());
            final double firstFanoutMs = (PauseRounds.fanoutSeconds(gateway) - firstFanoutBefore) * 1000;
            Thread.sleep(500); // the brokers' span lines of the first pause reach their log files
            final List<String> firstLines = new ArrayList<>();
            final List<List<String>> firstByBroker = ExportingSpans.lines(cluster);
            firstByBroker.forEach(firstLines::addAll);
            for (int b = 0; b < firstByBroker.size(); b++)
            {
                final ExportingSpans ofBroker = ExportingSpans.parse(firstByBroker.get(b));
                final int brokerPairs = pairs.size() / BROKERS;
                run.log("first pause on broker %d: %d commit(s) %s, its latest pair applied %.1f ms, obeyed %.1f ms " +
                        "after arriving", b, ofBroker.maxCommits(brokerPairs),
                    ofBroker.maxCommits(brokerPairs) > 0 ? String.format("in %.1f ms", ofBroker.commitP50Ms(brokerPairs)) : "",
                    ofBroker.appliedP50Ms(brokerPairs), ofBroker.obeyedP50Ms(brokerPairs));
            }
            final ExportingSpans first = ExportingSpans.parse(firstLines);
            final long firstResume = PauseRounds.timed(gateway.exportingControl("resume", null), pairs.size());
            final PartitionReplica firstOne = pairs.get(ThreadLocalRandom.current().nextInt(pairs.size()));
            final long firstOnePause = PauseRounds.timed(gateway.exportingControl("pause", List.of(firstOne)), 1);
            PauseRounds.timed(gateway.exportingControl("resume", List.of(firstOne)), 1);
            run.log("first calls after start: pause all %.1f ms (gateway fan-out %.1f ms; brokers: commit %.1f ms, " +
                    "applied %.1f ms, obeyed %.1f ms), resume all %.1f ms, pause one %.1f ms", firstPause / 1e6,
                firstFanoutMs, first.commitP50Ms(pairs.size()), first.appliedP50Ms(pairs.size()),
                first.obeyedP50Ms(pairs.size()), firstResume / 1e6, firstOnePause / 1e6);

            for (int i = 0; i < warmup; i++)
            {
                PauseRounds.round(gateway, pairs);
            }
            run.log("warmed up with %d rounds", warmup);

            final List<List<String>> linesBefore = ExportingSpans.lines(cluster);
            final long[][] samples = new long[4][rounds];
            final long[] fanoutNs = new long[rounds];
            final long[] outsideFanoutNs = new long[rounds];
            for (int i = 0; i < rounds; i++)
            {
                final PauseRounds.Round round = PauseRounds.round(gateway, pairs);
                samples[0][i] = round.pauseAllNs();
                samples[1][i] = round.resumeAllNs();
                samples[2][i] = round.pauseOneNs();
                samples[3][i] = round.resumeOneNs();
                fanoutNs[i] = round.fanoutNs();
                outsideFanoutNs[i] = round.pauseAllNs() - round.fanoutNs();
                run.log("round %d: pause all %.1f (gateway fan-out %.1f), resume all %.1f, pause one %.1f, resume one %.1f ms",
                    i + 1, round.pauseAllNs() / 1e6, round.fanoutNs() / 1e6, round.resumeAllNs() / 1e6,
                    round.pauseOneNs() / 1e6, round.resumeOneNs() / 1e6);
            }

            final long[] rtt = new long[Math.max(20, rounds)];
            for (int i = 0; i < rtt.length; i++)
            {
                rtt[i] = gateway.get("/actuator/health/liveness").elapsed().toNanos();
            }

            final double pauseAll = Stats.percentile(samples[0], 50) / 1e6;
            final double pauseOne = Stats.percentile(samples[2], 50) / 1e6;
            run.result("pause_all_pairs_p50_ms", pauseAll)
                .result("pause_all_pairs_p90_ms", Stats.percentile(samples[0], 90) / 1e6)
                .result("pause_one_pair_p50_ms", pauseOne)
                .result("pause_one_pair_p90_ms", Stats.percentile(samples[2], 90) / 1e6)
                .result("resume_all_pairs_p50_ms", Stats.percentile(samples[1], 50) / 1e6)
                .result("resume_all_pairs_p90_ms", Stats.percentile(samples[1], 90) / 1e6)
                .result("resume_one_pair_p50_ms", Stats.percentile(samples[3], 50) / 1e6)
                .result("resume_one_pair_p90_ms", Stats.percentile(samples[3], 90) / 1e6)
                .result("resume_ratio", (double)Stats.percentile(samples[1], 50) / Stats.percentile(samples[3], 50))
                .result("first_pause_all_pairs_ms", firstPause / 1e6)
                .result("first_resume_all_pairs_ms", firstResume / 1e6)
                .result("first_pause_one_pair_ms", firstOnePause / 1e6)
                .result("first_pause_gateway_fanout_ms", firstFanoutMs)
                .result("first_pause_broker_control_commit_ms", first.commitP50Ms(pairs.size()))
                .result("first_pause_broker_obeyed_ms", first.obeyedP50Ms(pairs.size()))
                .result("http_round_trip_p50_ms", Stats.percentile(rtt, 50) / 1e6);

            // Where the time of the measured pauses of all pairs went.
            run.result("gateway_fanout_all_pairs_p50_ms", Stats.percentile(fanoutNs, 50) / 1e6)
                .result("gateway_http_json_all_pairs_p50_ms", Stats.percentile(outsideFanoutNs, 50) / 1e6);
            Thread.sleep(500); // the brokers' last span lines reach their log files
            final ExportingSpans spans =
                ExportingSpans.parse(ExportingSpans.since(linesBefore, ExportingSpans.lines(cluster)));
            final double commitMs = spans.commitP50Ms(pairs.size());
            run.result("broker_control_commit_p50_ms", commitMs)
                .result("broker_applied_all_pairs_p50_ms", spans.appliedP50Ms(pairs.size()))
                .result("broker_obeyed_all_pairs_p50_ms", spans.obeyedP50Ms(pairs.size()))
                .result("broker_spans_operations", spans.operations(pairs.size()))
                .result("floor_ms", commitMs + Stats.percentile(rtt, 50) / 1e6)
                .result("pause_all_over_floor", pauseAll / (commitMs + Stats.percentile(rtt, 50) / 1e6));
            run.ratio(pauseAll / pauseOne);
            final Path report = run.finish();
            run.log("report: %s", report);
            // The brokers' and the gateway's logs go next to the report: their timestamps tell a first pause's story.
            final Path logs = report.resolveSibling("pause-http-logs");
            SluiceCluster.deleteRecursively(logs);
            Files.createDirectories(logs);
            try (java.util.stream.Stream<Path> files = Files.list(dir.resolve("logs")))
            {
                for (final Path log : files.toList())
                {
                    Files.copy(log, logs.resolve(log.getFileName()));
                }
            }
        }
        finally
        {
            SluiceCluster.deleteRecursively(dir);
        }
    }
}
