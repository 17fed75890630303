package io.sluice.qa.bench;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.qa.cluster.ClassDataSharing;
import io.sluice.qa.cluster.GatewayClient;
import io.sluice.qa.cluster.RecordToWrite;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.network.DelayedLinks;
import io.sluice.qa.network.NamespacedHosts;
import io.sluice.qa.network.NetworkLab;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Scale across hosts (issue 31): 8 brokers × 256 partitions × RF 3 (768 pairs, 96 replicas a broker), each broker and
 * the gateway in a network namespace of its own ({@link NetworkLab}), every link between them, and this JVM's link to
 * the gateway's management port, delayed by 2 ms each way ({@link DelayedLinks}: the kernel has no netem). Then the
 * same layout on loopback, as the baseline of what the hosts cost.
 * <p>
 * Each phase boots the cluster, waits until every partition is led by its preferred broker and every pair is known,
 * and measures:
 * <ul>
 *   <li>idle CPU: the broker JVMs' CPU time ({@code /proc}) over a window with no calls, per partition replica; with
 *   the gateway's, this JVM's (the latency proxies) and the machine's busy cores and load average over the same
 *   window (the machine is shared: other work shows there);</li>
 *   <li>pause and resume of all pairs and of one pair over HTTP from this JVM (p50/p90 over warm rounds, the first
 *   pause after start), and the control group commits per operation, counted from the brokers' DEBUG spans: one
 *   {@code committed_us} line is one proposal the control group committed;</li>
 *   <li>join: broker 1 stopped (SIGTERM), a few records a partition written meanwhile, started again, and timed from
 *   its process start to listening, reachable to the gateway, every pair known, every replica caught up
 *   ({@link BrokerJoin}).</li>
 * </ul>
 * Headline ratio: p50(pause all pairs) / p50(pause one pair) across hosts. {@code join_hosts_over_loopback} compares
 * the joins. Needs root, {@code ip} and {@code nft}; skips with the reason otherwise. Layout overrides (for finding
 * what fits a machine): {@code -Dsluice.bench.hosts-scale.brokers=N}, {@code .partitions=N}, {@code .latency-ms=N},
 * {@code .election-timeout=5s} ({@code sluice.broker.election-timeout} of every broker; the full run's default is
 * {@value #FULL_SIZE_ELECTION_TIMEOUT}, the quick one's the broker's own), {@code .loopback=false} (through
 * BENCH_JAVA_OPTS).
 */
public final class HostsScaleBenchmark
{
    private static final String NAME = "hosts-scale";
    private static final String PROPERTY = "sluice.bench.hosts-scale.";
    private static final int REPLICATION_FACTOR = 3;
    private static final int RESTARTED = 1;
    private static final String TOKEN = "hosts-scale-bench";
    /** What an operator's JVMs run with (as pause-http and startup), sized for nine JVMs on a small machine. */
    private static final List<String> JVM_OPTIONS = List.of("-Xms128m", "-Xmx512m", "-Xshare:auto");
    /** Harness waits stretched for nine JVMs booting on 2 shared cores (unless -Dsluice.qa.timeoutScale says). */
    private static final String DEFAULT_TIMEOUT_SCALE = "5";
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(120);
    private static final int RECORDS_WHILE_DOWN_PER_PARTITION = 2;
    private static final Duration BALANCE_WAIT = Duration.ofSeconds(90);
    /**
     * The full layout's Raft election timeout. With the broker's default 1 s, eight broker JVMs of 97 groups each on
     * 2 cores never settled here: heartbeats starved by the boot (load average 120-140) made followers stand, and
     * leaders changed ~100 times a minute for 8 minutes (terms past 56) before the run was stopped. Override with
     * {@code -Dsluice.bench.hosts-scale.election-timeout=1s}.
     */
    private static final String FULL_SIZE_ELECTION_TIMEOUT = "5s";

    private HostsScaleBenchmark()
    {
    }

    public static void main(final String[] args)
    {
        BenchmarkRun.runAndExit(NAME, args, HostsScaleBenchmark::measure);
    }

    /** The sizes of one run. */
    private record Layout(int brokers, int partitions, long latencyMs, String electionTimeout, int warmup, int rounds,
        int settleSeconds, int idleSeconds, int restarts)
    {
        int pairs()
        {
            return partitions * REPLICATION_FACTOR;
        }
    }

    private static void measure(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start(NAME, args);
        final Optional<String> unavailable = NetworkLab.unavailableReason();
        if (unavailable.isPresent())
        {
            System.out.println("benchmark " + NAME + " skipped: " + unavailable.get() +
                " (it puts each broker and the gateway in a network namespace of its own)");
            return;
        }
        if (System.getProperty(SluiceCluster.TIMEOUT_SCALE_PROPERTY) == null)
        {
            System.setProperty(SluiceCluster.TIMEOUT_SCALE_PROPERTY, DEFAULT_TIMEOUT_SCALE);
        }
        if (System.getProperty(SluiceCluster.JAR_PROPERTY) == null)
        {
            System.setProperty(SluiceCluster.JAR_PROPERTY, "dist/target/sluice.jar"); // bench.sh runs from the root
        }
        System.setProperty(ClassDataSharing.ENABLED_PROPERTY, "false");
        final Layout layout = new Layout(
            setting(run, "brokers", run.quick() ? 3 : 8),
            setting(run, "partitions", run.quick() ? 12 : 256),
            setting(run, "latency_ms", 2),
            System.getProperty(PROPERTY + "election-timeout", run.quick() ? "" : FULL_SIZE_ELECTION_TIMEOUT),
            run.choose("warmup_rounds", 1, 3),
            run.choose("rounds", 3, 10),
            run.choose("settle_seconds", 5, 30),
            run.choose("idle_seconds", 5, 30),
            run.choose("restarts", 1, 2));
        final boolean loopback = Boolean.parseBoolean(System.getProperty(PROPERTY + "loopback", "true"));
        run.param("election_timeout", layout.electionTimeout().isEmpty() ? "the broker's default (1s)" :
            layout.electionTimeout() + " (sluice.broker.election-timeout)");
        run.param("replication_factor", REPLICATION_FACTOR).param("pairs", layout.pairs())
            .param("replicas_per_broker", layout.pairs() / layout.brokers()).param("restarted_broker", RESTARTED)
            .param("latency", layout.latencyMs() + " ms each way on every link between namespaces, and bench to gateway")
            .param("jvm_options", String.join(" ", JVM_OPTIONS))
            .param("timeout_scale", System.getProperty(SluiceCluster.TIMEOUT_SCALE_PROPERTY))
            .param("request_timeout_ms", REQUEST_TIMEOUT.toMillis());

        final Map<String, Double> hosts = phase(run, layout, true);
        hosts.forEach((figure, value) -> run.result("hosts_" + figure, value));
        if (loopback)
        {
            final Map<String, Double> onLoopback = phase(run, layout, false);
            onLoopback.forEach((figure, value) -> run.result("loopback_" + figure, value));
            run.result("join_available_hosts_over_loopback",
                hosts.get("join_available_p50_ms") / onLoopback.get("join_available_p50_ms"))
                .result("join_caught_up_hosts_over_loopback",
                    hosts.get("join_caught_up_p50_ms") / onLoopback.get("join_caught_up_p50_ms"))
                .result("idle_hosts_over_loopback",
                    hosts.get("idle_broker_cores") / onLoopback.get("idle_broker_cores"));
        }
        run.ratio(hosts.get("pause_all_pairs_p50_ms") / hosts.get("pause_one_pair_p50_ms"));
        run.log("report: %s", run.finish());
    }

    private static int setting(final BenchmarkRun run, final String name, final int fallback)
    {
        final int value = Integer.getInteger(PROPERTY + name.replace('_', '-'), fallback);
        run.param(name, value);
        return value;
    }

    /** One cluster, across hosts with delayed links or on loopback; its figures by name. */
    private static Map<String, Double> phase(final BenchmarkRun run, final Layout layout, final boolean acrossHosts)
        throws Exception
    {
        final String phase = acrossHosts ? "hosts" : "loopback";
        final Path dir = Files.createTempDirectory("sluice-hosts-scale-bench-" + phase);
        NetworkLab lab = null;
        DelayedLinks links = null;
        SluiceCluster cluster = null;
        boolean done = false;
        try
        {
            final SluiceCluster.Builder builder = SluiceCluster.builder(dir.resolve("cluster")).brokers(layout.brokers())
                .partitions(layout.partitions()).replicationFactor(REPLICATION_FACTOR).token(TOKEN)
                .requestTimeout(REQUEST_TIMEOUT).jvmOptions(JVM_OPTIONS)
                .brokerProperty(ExportingSpans.SPAN_LOGGER, "DEBUG");
            if (!layout.electionTimeout().isEmpty())
            {
                builder.brokerProperty("sluice.broker.election-timeout", layout.electionTimeout());
            }
            final GatewayClient operator;
            if (acrossHosts)
            {
                lab = NetworkLab.create(dir, NamespacedHosts.hostNames(layout.brokers()));
                cluster = builder.hosts(new NamespacedHosts(lab)).build();
                final Map<String, List<Integer>> listening = new LinkedHashMap<>();
                for (int b = 0; b < layout.brokers(); b++)
                {
                    final int command = cluster.brokerCommandAddress(b).getPort();
                    listening.put(NamespacedHosts.broker(b), List.of(command, command + 1)); // command and Raft ports
                }
                final URI management = cluster.client().managementBase();
                listening.put(NamespacedHosts.GATEWAY, List.of(management.getPort()));
                links = DelayedLinks.install(lab, listening, layout.latencyMs(), 31);
                final InetSocketAddress via =
                    links.via(new InetSocketAddress(lab.address(NamespacedHosts.GATEWAY), management.getPort()));
                operator = new GatewayClient(cluster.client().clientBase(),
                    URI.create("http://" + via.getAddress().getHostAddress() + ":" + via.getPort()), TOKEN, CALL_TIMEOUT);
                run.log("%s: %d hosts on a bridge, %d latency proxies of %d ms", phase, lab.hostNames().size(),
                    links.proxies(), layout.latencyMs());
            }
            else
            {
                cluster = builder.build();
                operator = new GatewayClient(cluster.client().clientBase(), cluster.client().managementBase(), TOKEN,
                    CALL_TIMEOUT);
            }
            final Map<String, Double> figures = measure(run, layout, phase, cluster, operator);
            if (links != null)
            {
                figures.put("proxied_connections", (double)links.connections());
                run.log("%s: the latency proxies carried %s", phase, String.join("; ", links.carried()));
            }
            done = true;
            return figures;
        }
        finally
        {
            if (cluster != null)
            {
                cluster.close();
            }
            if (links != null)
            {
                links.close();
            }
            if (lab != null)
            {
                lab.close();
                if (lab.leftBehind())
                {
                    throw new IllegalStateException("the network lab left a namespace or link behind");
                }
            }
            if (done)
            {
                SluiceCluster.deleteRecursively(dir);
            }
            else
            {
                SluiceCluster.deleteRecursively(dir.resolve("cluster").resolve("data")); // ~1 GB of Raft logs at full size
                System.err.println(NAME + ": " + phase + " failed; its logs stay in " + dir.resolve("cluster").resolve("logs"));
            }
        }
    }

    private static Map<String, Double> measure(final BenchmarkRun run, final Layout layout, final String phase,
        final SluiceCluster cluster, final GatewayClient operator) throws Exception
    {
        final Map<String, Double> figures = new LinkedHashMap<>();
        final long startNs = System.nanoTime();
        cluster.start();
        cluster.awaitReady();
        cluster.awaitLeaders(SluiceCluster.STARTUP_TIMEOUT);
        for (int b = 0; b < layout.brokers(); b++)
        {
            cluster.awaitBrokerAvailable(b);
        }
        figures.put("partitions_not_on_preferred_broker_at_start", (double)awaitBalance(run, phase, cluster));
        figures.put("ready_s", (System.nanoTime() - startNs) / 1e9);
        run.log("%s: %d brokers × %d partitions × RF %d ready (leaders preferred, every pair known) in %.1f s", phase,
            layout.brokers(), layout.partitions(), REPLICATION_FACTOR, figures.get("ready_s"));

        idle(run, layout, phase, cluster, figures);
        pauses(run, layout, phase, cluster, operator, figures);
        joins(run, layout, phase, cluster, figures);
        return figures;
    }

    /**
     * Waits (bounded by {@link #BALANCE_WAIT}) until every partition is led by its preferred broker, as the brokers'
     * automatic balance brings them back; returns how many were not. Not a failure: on 2 cores a few automatic
     * transfers (500 ms each) kept timing out for minutes, and the pauses target every pair wherever its leader is.
     */
    private static int awaitBalance(final BenchmarkRun run, final String phase, final SluiceCluster cluster)
        throws InterruptedException
    {
        final long deadline = System.nanoTime() + BALANCE_WAIT.toNanos();
        int away = notOnPreferredBroker(cluster);
        while (away > 0 && System.nanoTime() < deadline)
        {
            Thread.sleep(500);
            away = notOnPreferredBroker(cluster);
        }
        if (away > 0)
        {
            run.log("%s: %d partitions still led away from their preferred broker after %d s; going on", phase, away,
                BALANCE_WAIT.toSeconds());
        }
        return away;
    }

    private static int notOnPreferredBroker(final SluiceCluster cluster)
    {
        int away = 0;
        for (final tools.jackson.databind.JsonNode partition :
            cluster.management("GET", "/actuator/partitions", null).json().path("partitions"))
        {
            if (partition.path("leaderId").asInt(-1) != partition.path("preferredLeaderId").asInt(-2))
            {
                away++;
            }
        }
        return away;
    }

    /** CPU over a window with no calls: the brokers' per replica, the gateway's, this JVM's, the machine's. */
    private static void idle(final BenchmarkRun run, final Layout layout, final String phase,
        final SluiceCluster cluster, final Map<String, Double> figures) throws IOException, InterruptedException
    {
        Thread.sleep(Duration.ofSeconds(layout.settleSeconds()).toMillis());
        final long self = ProcessHandle.current().pid();
        final long gateway = cluster.gateway().pid();
        final long[] brokersBefore = new long[layout.brokers()];
        for (int b = 0; b < layout.brokers(); b++)
        {
            brokersBefore[b] = ProcCpu.ticks(cluster.broker(b).pid());
        }
        final long gatewayBefore = ProcCpu.ticks(gateway);
        final long selfBefore = ProcCpu.ticks(self);
        final long[] machineBefore = ProcCpu.machineTicks();
        final long windowStart = System.nanoTime();
        Thread.sleep(Duration.ofSeconds(layout.idleSeconds()).toMillis());
        final double seconds = (System.nanoTime() - windowStart) / 1e9;
        final long[] machineAfter = ProcCpu.machineTicks();
        long brokerTicks = 0;
        int brokerThreads = 0;
        for (int b = 0; b < layout.brokers(); b++)
        {
            brokerTicks += ProcCpu.ticks(cluster.broker(b).pid()) - brokersBefore[b];
            brokerThreads += ProcCpu.threads(cluster.broker(b).pid());
        }
        final double brokerCores = brokerTicks / ProcCpu.TICKS_PER_SECOND / seconds;
        final int cores = Runtime.getRuntime().availableProcessors();
        figures.put("idle_broker_cores", brokerCores);
        figures.put("idle_millicores_per_replica", 1000 * brokerCores / layout.pairs());
        figures.put("idle_gateway_cores", (ProcCpu.ticks(gateway) - gatewayBefore) / ProcCpu.TICKS_PER_SECOND / seconds);
        figures.put("idle_bench_jvm_cores", (ProcCpu.ticks(self) - selfBefore) / ProcCpu.TICKS_PER_SECOND / seconds);
        figures.put("idle_machine_busy_cores",
            cores * (double)(machineAfter[0] - machineBefore[0]) / Math.max(1, machineAfter[1] - machineBefore[1]));
        figures.put("idle_load_average_1m", ProcCpu.loadAverage());
        figures.put("idle_broker_threads", (double)brokerThreads);
        run.log("%s idle over %.0f s: brokers %.3f cores (%.2f millicores per replica, %d threads), gateway %.3f, " +
                "this JVM (proxies) %.3f, machine busy %.2f of %d cores, load %.2f", phase, seconds, brokerCores,
            figures.get("idle_millicores_per_replica"), brokerThreads, figures.get("idle_gateway_cores"),
            figures.get("idle_bench_jvm_cores"), figures.get("idle_machine_busy_cores"), cores,
            figures.get("idle_load_average_1m"));
    }

    /** The first pause after start, then warm rounds of pause/resume all and one pair; commits per operation. */
    private static void pauses(final BenchmarkRun run, final Layout layout, final String phase,
        final SluiceCluster cluster, final GatewayClient operator, final Map<String, Double> figures) throws Exception
    {
        final List<PartitionReplica> pairs = new ArrayList<>(cluster.allPairs());
        final long firstPause = PauseRounds.timed(operator.exportingControl("pause", null), pairs.size());
        final long firstResume = PauseRounds.timed(operator.exportingControl("resume", null), pairs.size());
        figures.put("first_pause_all_pairs_ms", firstPause / 1e6);
        figures.put("first_resume_all_pairs_ms", firstResume / 1e6);
        run.log("%s: first pause of all %d pairs %.1f ms, its resume %.1f ms", phase, pairs.size(), firstPause / 1e6,
            firstResume / 1e6);
        for (int i = 0; i < layout.warmup(); i++)
        {
            PauseRounds.round(operator, pairs);
        }
        final List<List<String>> linesBefore = ExportingSpans.lines(cluster);
        final long[][] samples = new long[4][layout.rounds()];
        for (int i = 0; i < layout.rounds(); i++)
        {
            final PauseRounds.Round round = PauseRounds.round(operator, pairs);
            samples[0][i] = round.pauseAllNs();
            samples[1][i] = round.resumeAllNs();
            samples[2][i] = round.pauseOneNs();
            samples[3][i] = round.resumeOneNs();
            run.log("%s round %d: pause all %.1f (gateway fan-out %.1f), resume all %.1f, pause one %.1f, resume one %.1f ms",
                phase, i + 1, round.pauseAllNs() / 1e6, round.fanoutNs() / 1e6, round.resumeAllNs() / 1e6,
                round.pauseOneNs() / 1e6, round.resumeOneNs() / 1e6);
        }
        Thread.sleep(1_000); // the brokers' last span lines reach their log files (a late duplicate proposal too)
        final ExportingSpans spans = ExportingSpans.parse(ExportingSpans.since(linesBefore, ExportingSpans.lines(cluster)));
        final String[] names = {"pause_all_pairs", "resume_all_pairs", "pause_one_pair", "resume_one_pair"};
        for (int k = 0; k < names.length; k++)
        {
            figures.put(names[k] + "_p50_ms", Stats.percentile(samples[k], 50) / 1e6);
            figures.put(names[k] + "_p90_ms", Stats.percentile(samples[k], 90) / 1e6);
        }
        figures.put("pause_ratio", figures.get("pause_all_pairs_p50_ms") / figures.get("pause_one_pair_p50_ms"));
        figures.put("resume_ratio", figures.get("resume_all_pairs_p50_ms") / figures.get("resume_one_pair_p50_ms"));
        figures.put("control_commits_per_operation_all_pairs", spans.commitsPerOperation(pairs.size()));
        figures.put("control_commits_max_all_pairs", (double)spans.maxCommits(pairs.size()));
        figures.put("control_commits_per_operation_one_pair", spans.commitsPerOperation(1));
        figures.put("operations_all_pairs_seen_in_spans", (double)spans.operations(pairs.size()));
        figures.put("control_commit_all_pairs_p50_ms", spans.commitP50Ms(pairs.size()));
        figures.put("broker_obeyed_all_pairs_p50_ms", spans.obeyedP50Ms(pairs.size()));
        run.log("%s: pause all %.1f / one %.1f ms p50 (%.2f); %d operations of all pairs took %.2f control commits each " +
                "(at most %d), one-pair operations %.2f", phase, figures.get("pause_all_pairs_p50_ms"),
            figures.get("pause_one_pair_p50_ms"), figures.get("pause_ratio"), spans.operations(pairs.size()),
            figures.get("control_commits_per_operation_all_pairs"), spans.maxCommits(pairs.size()),
            figures.get("control_commits_per_operation_one_pair"));
    }

    /** Broker {@link #RESTARTED} stopped, written past, started again; its join times. */
    private static void joins(final BenchmarkRun run, final Layout layout, final String phase,
        final SluiceCluster cluster, final Map<String, Double> figures) throws Exception
    {
        final BrokerJoin join = new BrokerJoin(cluster, RESTARTED, SluiceCluster.STARTUP_TIMEOUT);
        final long[][] samples = new long[4][layout.restarts()];
        final double[] spring = new double[layout.restarts()];
        for (int i = 0; i < layout.restarts(); i++)
        {
            final BrokerJoin.Times times = join.restart(() -> writeWhileDown(cluster, layout.partitions()));
            samples[0][i] = times.listeningNs();
            samples[1][i] = times.reachableNs();
            samples[2][i] = times.availableNs();
            samples[3][i] = times.caughtUpNs();
            spring[i] = times.springSeconds();
            run.log("%s join %d of broker %d: listening %.2f s, reachable %.2f s, every pair known %.2f s, " +
                    "every replica caught up %.2f s (Spring context %.2f s)", phase, i + 1, RESTARTED,
                times.listeningNs() / 1e9, times.reachableNs() / 1e9, times.availableNs() / 1e9,
                times.caughtUpNs() / 1e9, times.springSeconds());
            awaitBalance(run, phase, cluster); // the next join starts from a balanced cluster, as a rolling restart would
        }
        final String[] names = {"listening", "reachable", "available", "caught_up"};
        for (int k = 0; k < names.length; k++)
        {
            figures.put("join_" + names[k] + "_p50_ms", Stats.percentile(samples[k], 50) / 1e6);
            figures.put("join_" + names[k] + "_max_ms", Stats.percentile(samples[k], 100) / 1e6);
        }
        figures.put("join_spring_context_p50_s", Stats.median(spring));
    }

    /** A few records for every partition (random keys, so most partitions get some) while the broker is down. */
    private static void writeWhileDown(final SluiceCluster cluster, final int partitions)
    {
        final List<RecordToWrite> batch = new ArrayList<>();
        for (int i = 0; i < partitions * RECORDS_WHILE_DOWN_PER_PARTITION; i++)
        {
            batch.add(new RecordToWrite(UUID.randomUUID().toString(), "{\"n\":" + i + "}"));
            if (batch.size() == 100)
            {
                cluster.client().writeBatch(batch);
                batch.clear();
            }
        }
        if (!batch.isEmpty())
        {
            cluster.client().writeBatch(batch);
        }
    }
}
