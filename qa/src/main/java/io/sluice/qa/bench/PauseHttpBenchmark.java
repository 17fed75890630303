package io.sluice.qa.bench;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.qa.cluster.ClassDataSharing;
import io.sluice.qa.cluster.ExportingControlAnswer;
import io.sluice.qa.cluster.GatewayClient;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.SluiceCluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
    private static final String SPAN_LOGGER = "logging.level.io.sluice.broker.control.ExportingControl";
    private static final Pattern PAIR_SPAN =
        Pattern.compile("exporting span version=(\\d+) partition=(\\d+) applied_us=(\\d+) obeyed_us=(\\d+)");
    private static final Pattern COMMIT_SPAN = Pattern.compile("exporting span version=(\\d+) committed_us=(\\d+)");
    private static final Pattern FANOUT_SUM =
        Pattern.compile("sluice_exporting_operation_seconds_sum\\{[^}]*operation=\"PAUSE\"[^}]*result=\"SUCCEEDED\"[^}]*} ([0-9.eE+-]+)");

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
        run.param("brokers", BROKERS).param("partitions", PARTITIONS).param("replication_factor", REPLICATION_FACTOR)
            .param("pairs", BROKERS * PARTITIONS).param("jvm_options", String.join(" ", JVM_OPTIONS));

        final Path dir = Files.createTempDirectory("sluice-pause-http-bench");
        try (SluiceCluster cluster = SluiceCluster.builder(dir).brokers(BROKERS).partitions(PARTITIONS)
            .replicationFactor(REPLICATION_FACTOR).jvmOptions(JVM_OPTIONS).brokerProperty(SPAN_LOGGER, "DEBUG").build())
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

            final double firstFanoutBefore = metric(FANOUT_SUM, gateway.get("/actuator/prometheus").body());
            final long firstPause = timed(gateway.exportingControl("pause", null), pairs.size());
            final double firstFanoutMs =
                (metric(FANOUT_SUM, gateway.get("/actuator/prometheus").body()) - firstFanoutBefore) * 1000;
            Thread.sleep(500); // the brokers' span lines of the first pause reach their log files
            final List<String> firstLines = new ArrayList<>();
            spanLines(cluster).forEach(firstLines::addAll);
            final Spans first = Spans.parse(firstLines, pairs.size());
            final long firstResume = timed(gateway.exportingControl("resume", null), pairs.size());
            final PartitionReplica firstOne = pairs.get(ThreadLocalRandom.current().nextInt(pairs.size()));
            final long firstOnePause = timed(gateway.exportingControl("pause", List.of(firstOne)), 1);
            timed(gateway.exportingControl("resume", List.of(firstOne)), 1);
            run.log("first calls after start: pause all %.1f ms (gateway fan-out %.1f ms; brokers: commit %.1f ms, " +
                    "applied %.1f ms, obeyed %.1f ms), resume all %.1f ms, pause one %.1f ms", firstPause / 1e6,
                firstFanoutMs, first.commitP50Ms(), first.appliedP50Ms(), first.obeyedP50Ms(), firstResume / 1e6,
                firstOnePause / 1e6);

            for (int i = 0; i < warmup; i++)
            {
                round(gateway, pairs);
            }
            run.log("warmed up with %d rounds", warmup);

            final List<List<String>> linesBefore = spanLines(cluster);
            final long[][] samples = new long[4][rounds];
            final long[] fanoutNs = new long[rounds];
            final long[] outsideFanoutNs = new long[rounds];
            for (int i = 0; i < rounds; i++)
            {
                final long[] round = round(gateway, pairs);
                for (int k = 0; k < 4; k++)
                {
                    samples[k][i] = round[k];
                }
                fanoutNs[i] = round[4];
                outsideFanoutNs[i] = round[0] - round[4];
                run.log("round %d: pause all %.1f (gateway fan-out %.1f), resume all %.1f, pause one %.1f, resume one %.1f ms",
                    i + 1, round[0] / 1e6, round[4] / 1e6, round[1] / 1e6, round[2] / 1e6, round[3] / 1e6);
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
                .result("first_pause_broker_control_commit_ms", first.commitP50Ms())
                .result("first_pause_broker_obeyed_ms", first.obeyedP50Ms())
                .result("http_round_trip_p50_ms", Stats.percentile(rtt, 50) / 1e6);

            // Where the time of the measured pauses of all pairs went.
            run.result("gateway_fanout_all_pairs_p50_ms", Stats.percentile(fanoutNs, 50) / 1e6)
                .result("gateway_http_json_all_pairs_p50_ms", Stats.percentile(outsideFanoutNs, 50) / 1e6);
            Thread.sleep(500); // the brokers' last span lines reach their log files
            final List<String> measured = new ArrayList<>();
            final List<List<String>> linesAfter = spanLines(cluster);
            for (int b = 0; b < linesAfter.size(); b++)
            {
                measured.addAll(linesAfter.get(b).subList(linesBefore.get(b).size(), linesAfter.get(b).size()));
            }
            final Spans spans = Spans.parse(measured, pairs.size());
            final double commitMs = spans.commitP50Ms();
            run.result("broker_control_commit_p50_ms", commitMs)
                .result("broker_applied_all_pairs_p50_ms", spans.appliedP50Ms())
                .result("broker_obeyed_all_pairs_p50_ms", spans.obeyedP50Ms())
                .result("broker_spans_operations", spans.operations())
                .result("floor_ms", commitMs + Stats.percentile(rtt, 50) / 1e6)
                .result("pause_all_over_floor", pauseAll / (commitMs + Stats.percentile(rtt, 50) / 1e6));
            run.ratio(pauseAll / pauseOne);
            run.log("report: %s", run.finish());
        }
        finally
        {
            SluiceCluster.deleteRecursively(dir);
        }
    }

    /**
     * One round: pause all, resume all, pause one random pair, resume it; the four latencies in ns, then the gateway's
     * fan-out time of the pause of all pairs (its timer's sum, scraped before and after that call: not timed).
     */
    private static long[] round(final GatewayClient gateway, final List<PartitionReplica> pairs)
    {
        final PartitionReplica one = pairs.get(ThreadLocalRandom.current().nextInt(pairs.size()));
        final double fanoutBefore = metric(FANOUT_SUM, gateway.get("/actuator/prometheus").body());
        final long pauseAll = timed(gateway.exportingControl("pause", null), pairs.size());
        final double fanoutAfter = metric(FANOUT_SUM, gateway.get("/actuator/prometheus").body());
        return new long[] {
            pauseAll,
            timed(gateway.exportingControl("resume", null), pairs.size()),
            timed(gateway.exportingControl("pause", List.of(one)), 1),
            timed(gateway.exportingControl("resume", List.of(one)), 1),
            Math.round((fanoutAfter - fanoutBefore) * 1e9),
        };
    }

    /** The call's latency; fails the benchmark when it did not succeed on every pair (no failed call is a sample). */
    private static long timed(final ExportingControlAnswer answer, final int pairs)
    {
        if (answer.status() != 200 || !"SUCCEEDED".equals(answer.result()) || answer.targets().size() != pairs)
        {
            throw new IllegalStateException("exporting call did not succeed on all " + pairs + " pairs: " + answer);
        }
        return answer.http().elapsed().toNanos();
    }

    private static double metric(final Pattern pattern, final String prometheus)
    {
        final Matcher matcher = pattern.matcher(prometheus);
        return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
    }

    /** Each broker's span lines so far, in the order of its log file. */
    private static List<List<String>> spanLines(final SluiceCluster cluster) throws IOException
    {
        final List<List<String>> brokers = new ArrayList<>();
        for (int b = 0; b < cluster.brokerCount(); b++)
        {
            final List<String> lines = new ArrayList<>();
            final Path log = cluster.runDirectory().resolve("logs").resolve("broker-" + b + ".log");
            for (final String line : Files.readAllLines(log))
            {
                if (line.contains("exporting span version="))
                {
                    lines.add(line);
                }
            }
            brokers.add(lines);
        }
        return brokers;
    }

    /** The brokers' spans of the measured operations of all pairs, by operation version. */
    private record Spans(List<Long> commitUs, List<Long> appliedUs, List<Long> obeyedUs)
    {
        static Spans parse(final List<String> lines, final int allPairs)
        {
            final Map<Long, Integer> pairsOf = new HashMap<>();
            final Map<Long, Long> applied = new HashMap<>();
            final Map<Long, Long> obeyed = new HashMap<>();
            final Map<Long, Long> committed = new HashMap<>();
            for (final String line : lines)
            {
                final Matcher pair = PAIR_SPAN.matcher(line);
                if (pair.find())
                {
                    final long version = Long.parseLong(pair.group(1));
                    pairsOf.merge(version, 1, Integer::sum);
                    applied.merge(version, Long.parseLong(pair.group(3)), Math::max);
                    obeyed.merge(version, Long.parseLong(pair.group(4)), Math::max);
                    continue;
                }
                final Matcher commit = COMMIT_SPAN.matcher(line);
                if (commit.find())
                {
                    committed.merge(Long.parseLong(commit.group(1)), Long.parseLong(commit.group(2)), Math::min);
                }
            }
            final List<Long> commitUs = new ArrayList<>();
            final List<Long> appliedUs = new ArrayList<>();
            final List<Long> obeyedUs = new ArrayList<>();
            for (final Map.Entry<Long, Integer> operation : pairsOf.entrySet())
            {
                if (operation.getValue() == allPairs)
                {
                    appliedUs.add(applied.get(operation.getKey()));
                    obeyedUs.add(obeyed.get(operation.getKey()));
                    if (committed.containsKey(operation.getKey()))
                    {
                        commitUs.add(committed.get(operation.getKey()));
                    }
                }
            }
            return new Spans(commitUs, appliedUs, obeyedUs);
        }

        long operations()
        {
            return appliedUs.size();
        }

        double commitP50Ms()
        {
            return p50Ms(commitUs);
        }

        double appliedP50Ms()
        {
            return p50Ms(appliedUs);
        }

        double obeyedP50Ms()
        {
            return p50Ms(obeyedUs);
        }

        private static double p50Ms(final List<Long> us)
        {
            if (us.isEmpty())
            {
                throw new IllegalStateException("no broker spans of operations of all pairs: is " + SPAN_LOGGER +
                    "=DEBUG honoured by the brokers?");
            }
            return Stats.percentile(us.stream().mapToLong(Long::longValue).toArray(), 50) / 1000.0;
        }
    }
}
