package io.sluice.qa.bench;

import io.sluice.qa.cluster.PortAllocator;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.broker.Broker;
import io.sluice.broker.BrokerConfig;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.control.ExportingChange;
import io.sluice.gateway.broker.SbeBrokerClient;
import io.sluice.gateway.exporting.ExportingControlService;
import io.sluice.gateway.exporting.ExportingOperationResult;
import io.sluice.gateway.exporting.ExportingOutcome;
import io.sluice.gateway.exporting.TargetResult;
import io.sluice.gateway.topology.PolledClusterTopology;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Pause latency against the number of (broker, partition) pairs, in one run: real brokers (Ratis groups, sockets,
 * disk) in this JVM and the gateway's real exporting service, broker client and polled topology (no HTTP, which
 * adds the same constant to every size).
 * <p>
 * Phase 1, 3 brokers × 64 partitions × RF 3: pauses of 1 pair, then of whole partitions (every replica) for 3, 12,
 * 48, 96 and all 192 pairs. Headline ratio = p50(all 192) / p50(one pair), the ratio of CONTRACT.md §5. Phase 2
 * (full run only), more brokers: 6 brokers × 64 partitions × RF 6 = 384 pairs against one pair (CONTRACT §5 names
 * both figures; RF 6 is what makes 64 partitions 384 pairs), 3 of them control group voters and 3 listeners.
 * <p>
 * {@code control_commits_per_pause}: exporting operations the control group committed per operation of all pairs,
 * counted on broker 0's replica (duplicates included, a late one too: it is read 400 ms after the operation). The
 * design aims at 1: the brokers of one operation share one entry.
 * <p>
 * Each sample pauses from EXPORTING and is followed by an unmeasured resume; a size's samples alternate with
 * one-pair samples so load drift hits both. A sample is a pause that succeeded on every target; failed attempts
 * are repeated and counted.
 * <p>
 * The floor: after the fan-out samples, the same cluster commits one exporting operation for every partition in the
 * control group, proposed in-process on its leader, until every broker's replica applied it (no gateway, no transport,
 * no pair answers). The fan-out cannot be cheaper than that; {@code fanout_over_control_commit} is how much the
 * gateway's path and the pair answers add.
 */
public final class PauseFanoutBenchmark
{
    private static final int REPLICATION_FACTOR = 3;
    /** Phase 2: 64 partitions on all 6 brokers make the 384 pairs of CONTRACT §5. */
    private static final int MORE_BROKERS_REPLICATION_FACTOR = 6;
    /** Longer than a broker waits for the control leader's entry before it proposes its own. */
    private static final long LATE_COMMIT_GRACE_MS = 400;
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration READY_TIMEOUT = Duration.ofMinutes(3);
    private static final int MAX_ATTEMPTS = 5;

    private static int failedAttempts;
    /** Attempts the last {@link #pauseThenResume} took (its operations all commit, failed or not). */
    private static int lastAttempts;

    /**
     * The figures of one cluster: pause latencies by size, the in-process commit floor for all partitions, and the
     * control group commits per operation of all pairs.
     */
    private record ClusterLatency(Map<Integer, SizeLatency> sizes, double leaderCommitAllP50Ms, double commitsPerOperation)
    {
        SizeLatency get(final int size)
        {
            return sizes.get(size);
        }
    }

    /** Pause latencies of one size, and of the one-pair pauses alternated with it, in ms. */
    private record SizeLatency(double p50Ms, double p90Ms, double onePairP50Ms, double onePairP90Ms)
    {
    }

    private PauseFanoutBenchmark()
    {
    }

    public static void main(final String[] args)
    {
        BenchmarkRun.runAndExit("pause-fanout", args, PauseFanoutBenchmark::measure);
    }

    private static void measure(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start("pause-fanout", args);
        final int brokers = run.choose("brokers", 3, 3);
        final int partitions = run.choose("partitions", 16, 64);
        final int samples = run.choose("samples", 7, 25);
        final int seriesSamples = run.choose("series_samples", 5, 11);
        final int warmup = run.choose("warmup", 2, 5);
        run.param("replication_factor", REPLICATION_FACTOR).param("request_timeout_ms", REQUEST_TIMEOUT.toMillis());
        final BrokerConfig.RaftTransport transport = run.raftTransport();

        final int pairs = partitions * REPLICATION_FACTOR;
        run.param("pairs", pairs);
        final List<Integer> series = new ArrayList<>();
        for (final int size : new int[] {3, 12, 48, 96})
        {
            if (size < pairs)
            {
                series.add(size);
            }
        }
        final ClusterLatency phase1 =
            measureCluster(run, transport, brokers, partitions, REPLICATION_FACTOR, warmup, samples, series, seriesSamples);
        final double allP50Ms = phase1.get(pairs).p50Ms();
        final double oneP50Ms = phase1.get(pairs).onePairP50Ms();
        run.result("pause_all_pairs_p50_ms", allP50Ms)
            .result("pause_all_pairs_p90_ms", phase1.get(pairs).p90Ms())
            .result("pause_one_pair_p50_ms", oneP50Ms)
            .result("pause_one_pair_p90_ms", phase1.get(pairs).onePairP90Ms());
        for (final int size : series)
        {
            run.result("pause_" + size + "_pairs_p50_ms", phase1.get(size).p50Ms());
        }
        run.result("pause_" + pairs + "_pairs_p50_ms", allP50Ms);
        run.result("control_commit_all_partitions_p50_ms", phase1.leaderCommitAllP50Ms())
            .result("fanout_over_control_commit", allP50Ms / phase1.leaderCommitAllP50Ms())
            .result("control_commits_per_pause", phase1.commitsPerOperation());

        if (!run.quick())
        {
            final int moreBrokers = 6;
            final int morePartitions = 64;
            run.param("more_brokers", moreBrokers).param("more_brokers_partitions", morePartitions)
                .param("more_brokers_replication_factor", MORE_BROKERS_REPLICATION_FACTOR);
            final int morePairs = morePartitions * MORE_BROKERS_REPLICATION_FACTOR;
            final ClusterLatency phase2 = measureCluster(run, transport, moreBrokers, morePartitions,
                MORE_BROKERS_REPLICATION_FACTOR, warmup, seriesSamples, List.of(), seriesSamples);
            run.result("pause_" + morePairs + "_pairs_p50_ms", phase2.get(morePairs).p50Ms())
                .result("more_brokers_pause_one_pair_p50_ms", phase2.get(morePairs).onePairP50Ms())
                .result("more_brokers_ratio", phase2.get(morePairs).p50Ms() / phase2.get(morePairs).onePairP50Ms())
                .result("more_brokers_control_commit_all_partitions_p50_ms", phase2.leaderCommitAllP50Ms())
                .result("more_brokers_control_commits_per_pause", phase2.commitsPerOperation());
        }
        run.result("failed_attempts", failedAttempts).ratio(allP50Ms / oneP50Ms);
        run.finish();
    }

    /**
     * Starts a cluster, warms it up, then measures pauses of every size in {@code series} (whole partitions,
     * {@code seriesSamples} each) and of all pairs ({@code samples}), each alternated with one-pair pauses.
     * Returns the latencies per size.
     */
    private static ClusterLatency measureCluster(
        final BenchmarkRun run,
        final BrokerConfig.RaftTransport raftTransport,
        final int brokerCount,
        final int partitions,
        final int replicationFactor,
        final int warmup,
        final int samples,
        final List<Integer> series,
        final int seriesSamples) throws Exception
    {
        final Path dataDir = Files.createTempDirectory("sluice-pause-fanout-bench");
        final List<Broker> brokers = new ArrayList<>();
        TransportClient transport = null;
        SbeBrokerClient client = null;
        PolledClusterTopology topology = null;
        try
        {
            final PartitionDistribution distribution =
                PartitionDistribution.of(PortAllocator.loopbackBrokerList(brokerCount), partitions, replicationFactor);
            final int pairs = distribution.replicas().size();
            final Map<String, ExporterConfig> exporters = Map.of("file", new ExporterConfig("file", "file",
                Map.of("path", dataDir.resolve("exports").resolve("file").toString())));
            final long startNs = System.nanoTime();
            for (int b = 0; b < brokerCount; b++)
            {
                brokers.add(Broker.start(BrokerConfig.of(b, distribution, dataDir, exporters).withRaftTransport(raftTransport)));
            }

            transport = new TransportClient(TransportConfig.defaults());
            final PolledClusterTopology[] topologyRef = new PolledClusterTopology[1];
            client = new SbeBrokerClient(transport, distribution, partitionId ->
                topologyRef[0] == null ? java.util.OptionalInt.empty() : topologyRef[0].leaderOf(partitionId), false);
            topology = new PolledClusterTopology(
                distribution, client, PolledClusterTopology.DEFAULT_POLL_INTERVAL, PolledClusterTopology.DEFAULT_POLL_TIMEOUT);
            topologyRef[0] = topology;
            topology.start();
            awaitReady(distribution, topology);
            run.log("%d brokers, %d partitions, %d pairs ready in %.1f s",
                brokerCount, partitions, pairs, (System.nanoTime() - startNs) / 1e9);

            final ExportingControlService service = new ExportingControlService(client, topology, REQUEST_TIMEOUT, Clock.systemUTC());
            final List<PartitionReplica> replicas = distribution.replicas();
            for (int i = 0; i < warmup; i++)
            {
                pauseThenResume(run, service, Optional.empty(), pairs);
                pauseThenResume(run, service, Optional.of(List.of(replicas.get(i % pairs))), 1);
            }
            run.log("warmed up with %d rounds", warmup);

            final Map<Integer, SizeLatency> figures = new LinkedHashMap<>();
            long allPairsOperations = 0;
            long allPairsCommits = 0;
            final List<Integer> sizes = new ArrayList<>(series);
            sizes.add(pairs);
            for (final int size : sizes)
            {
                final int count = size == pairs ? samples : seriesSamples;
                final long[] sizeNs = new long[count];
                final long[] oneNs = new long[count];
                for (int i = 0; i < count; i++)
                {
                    final PartitionReplica one = replicas.get(ThreadLocalRandom.current().nextInt(pairs));
                    final Optional<List<PartitionReplica>> sized =
                        size == pairs ? Optional.empty() : Optional.of(wholePartitions(distribution, size));
                    // Alternate which goes first, so neither always follows the heavier operation.
                    if (i % 2 == 0)
                    {
                        final long before = brokers.get(0).control().state().exportingChangesApplied();
                        sizeNs[i] = pauseThenResume(run, service, sized, size);
                        if (size == pairs)
                        {
                            Thread.sleep(LATE_COMMIT_GRACE_MS);
                            allPairsCommits += brokers.get(0).control().state().exportingChangesApplied() - before;
                            allPairsOperations += 2 * lastAttempts; // each attempt is a pause and a resume
                        }
                        oneNs[i] = pauseThenResume(run, service, Optional.of(List.of(one)), 1);
                    }
                    else
                    {
                        oneNs[i] = pauseThenResume(run, service, Optional.of(List.of(one)), 1);
                        sizeNs[i] = pauseThenResume(run, service, sized, size);
                    }
                    run.log("%d brokers, sample %d: %d pairs %.1f ms, one pair (%s) %.1f ms",
                        brokerCount, i + 1, size, sizeNs[i] / 1e6, one, oneNs[i] / 1e6);
                }
                figures.put(size, new SizeLatency(Stats.percentile(sizeNs, 50) / 1e6, Stats.percentile(sizeNs, 90) / 1e6,
                    Stats.percentile(oneNs, 50) / 1e6, Stats.percentile(oneNs, 90) / 1e6));
                run.log("%d brokers: %d pairs p50 %.1f ms, one pair p50 %.1f ms",
                    brokerCount, size, figures.get(size).p50Ms(), figures.get(size).onePairP50Ms());
            }
            final double commitsPerOperation = allPairsOperations == 0 ? Double.NaN :
                (double)allPairsCommits / allPairsOperations;
            run.log("%d brokers: %d control group commits for %d operations of all pairs (%.2f each)",
                brokerCount, allPairsCommits, allPairsOperations, commitsPerOperation);
            final double leaderCommitMs = measureLeaderCommits(run, brokers, distribution.partitionCount(), samples);
            run.log("%d brokers: one control group operation for all %d partitions, proposed on its leader and applied " +
                "on every broker, p50 %.1f ms", brokerCount, distribution.partitionCount(), leaderCommitMs);
            return new ClusterLatency(figures, leaderCommitMs, commitsPerOperation);
        }
        finally
        {
            if (topology != null)
            {
                topology.close();
            }
            if (client != null)
            {
                client.close();
            }
            if (transport != null)
            {
                transport.close();
            }
            for (final Broker broker : brokers)
            {
                broker.close();
            }
            SluiceCluster.deleteRecursively(dataDir);
        }
    }

    /**
     * p50 of committing one exporting operation for every partition in the control group, proposed in-process on
     * the broker that leads it, until every broker's replica applied it: the Raft cost a fan-out over all pairs cannot
     * go below. Runs last on a cluster, because its versions outrank any the gateway's service would pick afterwards.
     */
    private static double measureLeaderCommits(
        final BenchmarkRun run, final List<Broker> brokers, final int partitionCount, final int samples) throws Exception
    {
        final long[] ns = new long[samples];
        long version = Long.MAX_VALUE / 2;
        for (int i = 0; i < samples; i++)
        {
            for (int attempt = 1; ; attempt++)
            {
                final Broker leader = controlLeader(brokers);
                final ExportingState state = i % 2 == 0 ? ExportingState.PAUSED : ExportingState.EXPORTING;
                final long sampleVersion = ++version;
                final int anyPartition = leader.partitions().keySet().iterator().next();
                final long startNs = System.nanoTime();
                final CompletableFuture<?> committed = leader.exportingControl()
                    .change(anyPartition, ExportingChange.ofAll(sampleVersion, state), false)
                    .thenCompose((ignored) -> CompletableFuture.allOf(brokers.stream()
                        .map((b) -> b.control().state().awaitVersion(partitionCount, sampleVersion))
                        .toArray(CompletableFuture[]::new)));
                try
                {
                    committed.get(2 * REQUEST_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                    ns[i] = System.nanoTime() - startNs;
                    break;
                }
                catch (final ExecutionException e)
                {
                    failedAttempts++;
                    run.log("control commit attempt %d failed, not a sample: %s", attempt, e.getCause());
                    if (attempt == MAX_ATTEMPTS)
                    {
                        throw e;
                    }
                    Thread.sleep(1_000);
                }
            }
        }
        return Stats.percentile(ns, 50) / 1e6;
    }

    /** The broker leading the control group, waiting (bounded) while one is being elected. */
    private static Broker controlLeader(final List<Broker> brokers) throws InterruptedException
    {
        final long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (true)
        {
            for (final Broker broker : brokers)
            {
                if (broker.control().isLeader())
                {
                    return broker;
                }
            }
            if (System.nanoTime() > deadline)
            {
                throw new IllegalStateException("no broker leads the control group");
            }
            Thread.sleep(50);
        }
    }

    /** Every replica of {@code size / RF} partitions picked at random: a size of 1 is one pair. */
    private static List<PartitionReplica> wholePartitions(final PartitionDistribution distribution, final int size)
    {
        final List<Integer> partitionIds = new ArrayList<>();
        for (int p = 1; p <= distribution.partitionCount(); p++)
        {
            partitionIds.add(p);
        }
        Collections.shuffle(partitionIds, ThreadLocalRandom.current());
        final List<PartitionReplica> targets = new ArrayList<>();
        for (final int partitionId : partitionIds.subList(0, Math.max(1, size / REPLICATION_FACTOR)))
        {
            for (final int brokerId : distribution.replicasOf(partitionId))
            {
                targets.add(new PartitionReplica(brokerId, partitionId));
            }
        }
        return targets.subList(0, size);
    }

    /**
     * Measures one pause that succeeds on every target, then resumes the same targets unmeasured. An attempt
     * that fails (a leader change on a loaded machine) is not a sample: it is logged, counted and repeated.
     */
    private static long pauseThenResume(
        final BenchmarkRun run,
        final ExportingControlService service,
        final Optional<List<PartitionReplica>> targets,
        final int expected) throws Exception
    {
        for (int attempt = 1; ; attempt++)
        {
            lastAttempts = attempt;
            final long startNs = System.nanoTime();
            final ExportingOperationResult paused =
                service.pause(false, targets).get(2 * REQUEST_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            final long elapsedNs = System.nanoTime() - startNs;
            final ExportingOperationResult resumed =
                service.resume(targets).get(2 * REQUEST_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            final String failure = failure(paused, expected) + failure(resumed, expected);
            if (failure.isEmpty())
            {
                return elapsedNs;
            }
            failedAttempts++;
            run.log("attempt %d failed, not a sample: %s", attempt, failure);
            if (attempt == MAX_ATTEMPTS)
            {
                throw new IllegalStateException("no successful pause and resume in " + MAX_ATTEMPTS + " attempts: " + failure);
            }
            Thread.sleep(1_000);
        }
    }

    private static String failure(final ExportingOperationResult result, final int expected)
    {
        if (result.result() == ExportingOutcome.SUCCEEDED && result.targets().size() == expected)
        {
            return "";
        }
        final String errors = result.targets().stream()
            .filter(target -> target.outcome() != ExportingOutcome.SUCCEEDED)
            .limit(3)
            .map(TargetResult::error)
            .collect(Collectors.joining("; "));
        return result.operation() + " ended " + result.result() + " (" + result.count(ExportingOutcome.FAILED) + " failed, " +
            result.count(ExportingOutcome.TIMED_OUT) + " timed out of " + result.targets().size() + "): " + errors + ". ";
    }

    private static void awaitReady(final PartitionDistribution distribution, final PolledClusterTopology topology)
        throws InterruptedException
    {
        final long deadlineNs = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadlineNs)
        {
            if (isReady(distribution, topology))
            {
                return;
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException("cluster not ready within " + READY_TIMEOUT.toSeconds() +
            " s: every broker reachable and every partition led");
    }

    private static boolean isReady(final PartitionDistribution distribution, final PolledClusterTopology topology)
    {
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            if (!topology.isReachable(b))
            {
                return false;
            }
        }
        for (int p = 1; p <= distribution.partitionCount(); p++)
        {
            if (topology.leaderOf(p).isEmpty())
            {
                return false;
            }
        }
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            if (!topology.isControlCaughtUp(b))
            {
                return false;
            }
        }
        if (topology.controlLeader().isEmpty())
        {
            return false;
        }
        for (final PartitionReplica replica : distribution.replicas())
        {
            if (topology.status(replica).isEmpty())
            {
                return false;
            }
        }
        return true;
    }

}
