package io.sluice.qa.chaos;

import io.sluice.exporter.opensearch.testing.OpenSearchNode;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.qa.cluster.GatewayClient;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.network.LatencyProxy;
import io.sluice.qa.network.NamespacedHosts;
import io.sluice.qa.network.NetworkLab;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One chaos run (issue 31): a 3-broker cluster and its gateway, each in a network namespace of its own; the workload
 * and the nemesis for the given time; then every fault healed, the cluster left to settle, the status read until it
 * converges, every pair resumed, and the exports and backfills awaited (bounded); then the checker's verdicts, written
 * to {@code <out>/report.json} and {@code <out>/timeline.svg}. The cluster's files stay in {@code <out>/cluster}.
 * <p>
 * With the {@code opensearch} profile an OpenSearch node in this JVM is a second sink; the properties about what a sink
 * received are judged on its index too ({@code opensearch-...}).
 * <p>
 * {@code main}: {@code --seed N --minutes M | --seconds S [--profile opensearch] [--out DIR]}; exit code 0 only when every property holds
 * (1 when one is violated, 2 for bad arguments, 3 when this machine cannot host network namespaces).
 */
public final class ChaosRun
{
    public static final String TOKEN = "chaos-token";
    private static final int BROKERS = 3;
    private static final int PARTITIONS = 3;
    private static final int APPENDERS = 2;
    private static final Duration SETTLE = Duration.ofSeconds(90);
    private static final String SEARCH = "search";
    private static final String SEARCH_INDEX = "sluice-chaos";
    /** The properties judged again on the OpenSearch index in that profile: the ones about what a sink received. */
    private static final Set<String> SINK_PROPERTIES = Set.of(Checker.NO_LOST_APPEND, Checker.NO_DUPLICATE_APPEND,
        Checker.EXPORTS_IN_ORDER, Checker.NOTHING_EXPORTED_WHILE_PAUSED);

    private ChaosRun()
    {
    }

    /** The sinks of a run: the file exporter alone, or also an OpenSearch exporter into a node in this JVM. */
    public enum Profile
    {
        DEFAULT, OPENSEARCH
    }

    public static ChaosReport run(final long seed, final Duration duration, final Path out)
    {
        return run(seed, duration, out, Profile.DEFAULT);
    }

    public static ChaosReport run(final long seed, final Duration duration, final Path out, final Profile profile)
    {
        SluiceCluster.deleteRecursively(out.resolve("cluster"));
        SluiceCluster.deleteRecursively(out.resolve("opensearch"));
        final NetworkLab lab = NetworkLab.create(out, NamespacedHosts.hostNames(BROKERS));
        SluiceCluster cluster = null;
        OpenSearchNode node = null;
        LatencyProxy toNode = null;
        try
        {
            final SluiceCluster.Builder builder = SluiceCluster.builder(out.resolve("cluster")).brokers(BROKERS)
                .partitions(PARTITIONS).token(TOKEN).requestTimeout(Duration.ofSeconds(2)).hosts(new NamespacedHosts(lab));
            if (profile == Profile.OPENSEARCH)
            {
                node = OpenSearchNode.start(out.resolve("opensearch"));
                // the node listens on this JVM's loopback; the brokers reach it through a forwarder on the bridge
                toNode = new LatencyProxy(lab.rootAddress(), new InetSocketAddress(InetAddress.getLoopbackAddress(),
                    node.httpPort()), 0, 0, seed);
                builder.property("sluice.exporters.file.type", "file")
                    .property("sluice.exporters." + SEARCH + ".type", "opensearch")
                    .property("sluice.exporters." + SEARCH + ".url", "http://" +
                        toNode.address().getAddress().getHostAddress() + ":" + toNode.address().getPort())
                    .property("sluice.exporters." + SEARCH + ".index", SEARCH_INDEX)
                    .property("sluice.exporters." + SEARCH + ".bulk.max-delay", "200ms")
                    .property("sluice.exporters." + SEARCH + ".retry.max-backoff", "2s");
            }
            cluster = builder.build();
            return run(seed, duration, out, lab, cluster, node);
        }
        catch (final Exception ex)
        {
            throw ex instanceof RuntimeException runtime ? runtime : new IllegalStateException(ex);
        }
        finally
        {
            if (cluster != null)
            {
                cluster.close();
            }
            if (toNode != null)
            {
                toNode.close();
            }
            if (node != null)
            {
                try
                {
                    node.close();
                }
                catch (final Exception ex)
                {
                    System.err.println("chaos: closing the OpenSearch node: " + ex);
                }
            }
            lab.close();
        }
    }

    private static ChaosReport run(final long seed, final Duration duration, final Path out, final NetworkLab lab,
        final SluiceCluster cluster, final OpenSearchNode node)
    {
        cluster.start();
        cluster.awaitReady();
        cluster.awaitLeaders();
        cluster.log("chaos seed " + seed + " for " + duration.toSeconds() + " s, hosts " + cluster.brokerList());

        final Map<Integer, List<Integer>> replicas = new LinkedHashMap<>();
        for (int partitionId = 1; partitionId <= PARTITIONS; partitionId++)
        {
            replicas.put(partitionId, cluster.replicasOf(partitionId));
        }
        final HistoryRecorder recorder = new HistoryRecorder();
        final GatewayClient client = new GatewayClient(cluster.client().clientBase(), cluster.client().managementBase(),
            TOKEN, Duration.ofSeconds(8));
        final Set<PartitionReplica> pairs = cluster.allPairs();
        final Workload workload = new Workload(client, recorder, pairs, replicas, seed, APPENDERS);
        final Nemesis nemesis = new Nemesis(cluster, lab, seed, recorder);
        final ExportWatcher watcher = new ExportWatcher(cluster.dataDirectory().resolve("exports").resolve("file"),
            PARTITIONS, recorder);
        final IndexWatcher indexWatcher = node == null ? null : new IndexWatcher(node, SEARCH_INDEX, PARTITIONS, recorder);
        final AtomicBoolean watching = new AtomicBoolean(true);
        final Thread watcherThread = new Thread(() ->
        {
            long lastIndexPoll = 0;
            while (watching.get())
            {
                watcher.poll();
                if (indexWatcher != null && System.nanoTime() - lastIndexPoll > 250_000_000L)
                {
                    indexWatcher.poll();
                    lastIndexPoll = System.nanoTime();
                }
                Workload.sleep(50);
            }
        }, "chaos-export-watcher");
        watcherThread.setDaemon(true);
        watcherThread.start();

        final long started = System.nanoTime();
        workload.start();
        nemesis.start();
        Workload.sleep(duration.toMillis());
        nemesis.stop();
        workload.stop();
        final long seconds = Duration.ofNanos(System.nanoTime() - started).toSeconds();
        cluster.log("chaos: healed after " + seconds + " s, " + nemesis.counts() + "; settling");

        settle(cluster, workload);
        awaitExports(recorder, () -> recorder.history(Map.of()).exports(), cluster);
        if (indexWatcher != null)
        {
            awaitExports(recorder, indexWatcher::exports, cluster);
        }
        awaitBackfills(workload, cluster);
        watching.set(false);
        try
        {
            watcherThread.join(10_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        watcher.poll();

        final History history = recorder.history(replicas);
        final List<Verdict> verdicts = new java.util.ArrayList<>(Checker.check(history));
        if (indexWatcher != null)
        {
            indexWatcher.poll();
            // the index's own history: the same operations, its documents as the exports
            final History indexed = new History(history.operations(), indexWatcher.exports(), replicas);
            for (final Verdict verdict : Checker.check(indexed))
            {
                if (SINK_PROPERTIES.contains(verdict.property()))
                {
                    verdicts.add(new Verdict("opensearch-" + verdict.property(), verdict.counterexample()));
                }
            }
        }
        final ChaosReport report = ChaosReport.of(seed, seconds, nemesis.faults(), history, verdicts);
        report.write(out, history, nemesis.faults());
        cluster.log(report.summary());
        return report;
    }

    /**
     * Waits (bounded) for every partition to have a leader and every broker to be seen, then reads the status until
     * every partition's pairs agree on a known state (each read recorded as after the heal: the checker judges the
     * last), then resumes every pair until a 200 (recorded too), so the exports can catch up.
     */
    private static void settle(final SluiceCluster cluster, final Workload workload)
    {
        final long deadline = System.nanoTime() + SETTLE.toNanos();
        try
        {
            cluster.awaitLeaders(SETTLE);
        }
        catch (final RuntimeException ex)
        {
            cluster.log("chaos: no leader on every partition within " + SETTLE + " after healing: " + ex.getMessage());
        }
        while (System.nanoTime() - deadline < 0)
        {
            final Operation.StatusRead read = workload.readStatus(Workload.HARNESS, true);
            if (read.outcome() == Outcome.OK && agrees(read))
            {
                break;
            }
            Workload.sleep(500);
        }
        while (System.nanoTime() - deadline < 0)
        {
            if (workload.control(Workload.HARNESS, ControlKind.RESUME, null, 0).outcome() == Outcome.OK)
            {
                return;
            }
            Workload.sleep(1_000);
        }
        cluster.log("chaos: no resume answered 200 within " + SETTLE + " after healing");
    }

    private static boolean agrees(final Operation.StatusRead read)
    {
        final Map<Integer, Set<String>> states = new LinkedHashMap<>();
        for (final Map.Entry<PartitionReplica, String> entry : read.states().entrySet())
        {
            if (entry.getValue() == null || "UNKNOWN".equals(entry.getValue()))
            {
                return false;
            }
            states.computeIfAbsent(entry.getKey().partitionId(), p -> new HashSet<>()).add(entry.getValue());
        }
        return !states.isEmpty() && states.values().stream().allMatch(set -> set.size() == 1);
    }

    /** Until every acknowledged append is in the exports (bounded: the checker reports what is missing). */
    private static void awaitExports(final HistoryRecorder recorder, final java.util.function.Supplier<List<Export>> exports,
        final SluiceCluster cluster)
    {
        final long deadline = System.nanoTime() + SETTLE.toNanos();
        while (System.nanoTime() - deadline < 0)
        {
            final History history = recorder.history(Map.of());
            final Set<String> exported = new HashSet<>();
            exports.get().forEach(export -> exported.add(export.partitionId() + "/" + export.position()));
            final long missing = history.operations(Operation.Append.class).stream()
                .filter(append -> append.outcome() == Outcome.OK)
                .filter(append -> !exported.contains(append.partitionId() + "/" + append.position()))
                .count();
            if (missing == 0)
            {
                return;
            }
            Workload.sleep(500);
        }
        cluster.log("chaos: acknowledged appends still not exported " + SETTLE + " after healing");
    }

    private static void awaitBackfills(final Workload workload, final SluiceCluster cluster)
    {
        final long deadline = System.nanoTime() + SETTLE.toNanos();
        for (final String backfillId : workload.unfinishedBackfills())
        {
            while (!Workload.isTerminal(workload.readBackfill(Workload.HARNESS, backfillId)) &&
                System.nanoTime() - deadline < 0)
            {
                Workload.sleep(1_000);
            }
        }
    }

    public static void main(final String[] args)
    {
        long seed = -1;
        long seconds = -1;
        Path out = null;
        Profile profile = Profile.DEFAULT;
        for (int i = 0; i < args.length; i++)
        {
            final String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i])
            {
                case "--seed" -> seed = Long.parseLong(require(value, "--seed"));
                case "--minutes" -> seconds = 60 * Long.parseLong(require(value, "--minutes"));
                case "--seconds" -> seconds = Long.parseLong(require(value, "--seconds"));
                case "--out" -> out = Path.of(require(value, "--out"));
                case "--profile" -> profile = switch (require(value, "--profile"))
                {
                    case "default" -> Profile.DEFAULT;
                    case "opensearch" -> Profile.OPENSEARCH;
                    default -> usage("unknown profile '" + value + "' (default, opensearch)");
                };
                default -> usage("unknown argument '" + args[i] + "'");
            }
            i++;
        }
        if (seed < 0 || seconds <= 0)
        {
            usage("--seed and --minutes (or --seconds) are required");
        }
        final Optional<String> unavailable = NetworkLab.unavailableReason();
        if (unavailable.isPresent())
        {
            System.err.println("chaos: cannot run here: " + unavailable.get());
            System.exit(3);
        }
        final Path directory = out != null ? out : Path.of("qa", "target", "chaos", Long.toString(seed));
        final ChaosReport report = run(seed, Duration.ofSeconds(seconds), directory.toAbsolutePath(), profile);
        System.out.println(report.summary());
        System.out.println("chaos: report in " + directory.toAbsolutePath().resolve("report.json"));
        System.exit(report.holds() ? 0 : 1);
    }

    private static String require(final String value, final String option)
    {
        if (value == null)
        {
            usage(option + " needs a value");
        }
        return value;
    }

    private static <T> T usage(final String problem)
    {
        System.err.println("chaos: " + problem);
        System.err.println("usage: bash qa/chaos.sh --seed N (--minutes M | --seconds S) [--profile opensearch] [--out DIR]");
        System.exit(2);
        return null;
    }
}
