package io.sluice.qa.bench;

import io.sluice.broker.BrokerConfig;
import io.sluice.broker.RaftSettings;
import io.sluice.broker.raft.RaftPeers;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ClassDataSharing;
import io.sluice.qa.cluster.GatewayClient;
import io.sluice.qa.cluster.PortAllocator;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.SluiceProcess;
import io.sluice.protocol.cluster.PartitionDistribution;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * CPU an idle cluster spends per partition replica: the standalone of {@code sluice.jar} (3 brokers, the gateway,
 * 64 partitions × RF 3, one JVM, no writes) run as a user runs it, against bare Ratis in the same layout (3
 * {@code RaftServer}s × 64 groups of a state machine that only applies, with the broker's Ratis settings, in this
 * JVM), and the same bare groups with Ratis's default election timeouts (what the broker's longer ones save in
 * heartbeats). Each side settles (elections, leader balance, JIT), then its process's CPU time (user + system, GC and JIT
 * included, from {@code /proc}) is read over the measuring window, with a breakdown by thread family.
 * Ratio: standalone / bare.
 */
public final class IdleBenchmark
{
    private static final int BROKERS = 3;
    private static final int REPLICATION_FACTOR = 3;
    private static final int FAMILIES_REPORTED = 8;
    /** HotSpot's compiler threads: still compiling after the settle time, and noise to a comparison of two sides. */
    private static final String JIT_FAMILY = "c_compilerthread";

    private IdleBenchmark()
    {
    }

    public static void main(final String[] args)
    {
        BenchmarkRun.runAndExit("idle", args, IdleBenchmark::measure);
    }

    private static void measure(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start("idle", args);
        final int partitions = run.choose("partitions", 8, 64);
        final int settleSeconds = run.choose("settle_seconds", 3, 20);
        final int measureSeconds = run.choose("measure_seconds", 5, 30);
        run.param("brokers", BROKERS).param("replication_factor", REPLICATION_FACTOR);
        final int replicas = partitions * REPLICATION_FACTOR;

        final IdleCpu standalone = standalone(run, partitions, settleSeconds, measureSeconds);
        report(run, "standalone", standalone, replicas);
        final IdleCpu bare = bare(run, partitions, settleSeconds, measureSeconds, null);
        report(run, "bare", bare, replicas);
        // What the broker's election timeouts save: the same bare groups on Ratis's default 150-300 ms, whose
        // leaders heartbeat every follower every 75 ms instead of every 500 ms.
        final IdleCpu ratisDefaults = bare(run, partitions, settleSeconds, measureSeconds, Duration.ofMillis(150));
        report(run, "bare_ratis_default_timeouts", ratisDefaults, replicas);
        run.ratio(standalone.cores() / bare.cores());
        run.finish();
    }

    private static void report(final BenchmarkRun run, final String side, final IdleCpu cpu, final int replicas)
    {
        run.result(side + "_cores", cpu.cores())
            .result(side + "_millicores_per_replica", 1000 * cpu.cores() / replicas)
            .result(side + "_cores_without_jit", cpu.cores() - cpu.coresByFamily().getOrDefault(JIT_FAMILY, 0.0))
            .result(side + "_threads", cpu.threads());
        final List<Map.Entry<String, Double>> families = new ArrayList<>(cpu.coresByFamily().entrySet());
        families.sort(Map.Entry.<String, Double>comparingByValue(Comparator.reverseOrder()));
        final StringBuilder most = new StringBuilder();
        for (final Map.Entry<String, Double> family : families.subList(0, Math.min(FAMILIES_REPORTED, families.size())))
        {
            run.result(side + "_cores_" + family.getKey(), family.getValue());
            most.append(most.length() == 0 ? "" : ", ").append(family.getKey())
                .append(String.format(java.util.Locale.ROOT, " %.3f", family.getValue()));
        }
        run.log("%s: %.3f cores idle, %.2f millicores per replica, %d threads; most: %s", side, cpu.cores(),
            1000 * cpu.cores() / replicas, cpu.threads(), most);
    }

    // ------------------------------------------------------------------------------------------- standalone

    private static IdleCpu standalone(
        final BenchmarkRun run, final int partitions, final int settleSeconds, final int measureSeconds)
        throws Exception
    {
        // Started as a user starts it: no class data sharing archive (training one would take longer than the run).
        System.setProperty(ClassDataSharing.ENABLED_PROPERTY, "false");
        if (System.getProperty(SluiceCluster.JAR_PROPERTY) == null)
        {
            System.setProperty(SluiceCluster.JAR_PROPERTY, "dist/target/sluice.jar"); // bench.sh runs from the root
        }
        final Path runDir = Files.createTempDirectory("sluice-idle-bench");
        final int clientPort = PortAllocator.freePort();
        final int managementPort = PortAllocator.freePort();
        final List<String> properties = List.of(
            "--sluice.cluster.brokers=" + PortAllocator.loopbackBrokerList(BROKERS),
            "--sluice.cluster.partitions=" + partitions,
            "--sluice.cluster.replication-factor=" + REPLICATION_FACTOR,
            "--sluice.data-dir=" + runDir.resolve("data"),
            "--server.address=127.0.0.1", "--server.port=" + clientPort,
            "--management.server.address=127.0.0.1", "--management.server.port=" + managementPort);
        final SluiceProcess process = new SluiceProcess("standalone",
            SluiceProcess.javaCommand(SluiceCluster.jar(), run.childJvmOptions(List.of()), "standalone", properties),
            runDir, runDir.resolve("standalone.log"), null);
        final GatewayClient client = new GatewayClient(URI.create("http://127.0.0.1:" + clientPort),
            URI.create("http://127.0.0.1:" + managementPort), null, Duration.ofSeconds(30));
        process.start();
        try
        {
            final long startNs = System.nanoTime();
            Await.until("standalone with every partition led by its preferred broker", Duration.ofMinutes(3), () ->
            {
                if (!process.isAlive())
                {
                    throw new IllegalStateException("the standalone exited: " + process.logTail(20));
                }
                return client.isReady() && client.preferredBrokersLead();
            });
            run.log("standalone: %d partitions led by their preferred brokers after %.1f s; settling %d s",
                partitions, (System.nanoTime() - startNs) / 1e9, settleSeconds);
            Thread.sleep(TimeUnit.SECONDS.toMillis(settleSeconds));
            return IdleCpu.measure(process.pid(), measureSeconds);
        }
        finally
        {
            process.stop(Duration.ofSeconds(30));
            SluiceCluster.deleteRecursively(runDir);
        }
    }

    // ------------------------------------------------------------------------------------------- bare Ratis

    /** {@code electionTimeoutMin}: null for the broker's own, else that and twice it as the maximum. */
    private static IdleCpu bare(final BenchmarkRun run, final int partitions, final int settleSeconds,
        final int measureSeconds, final Duration electionTimeoutMin) throws Exception
    {
        final Path dataDir = Files.createTempDirectory("sluice-idle-bench-bare");
        final PartitionDistribution distribution = new PartitionDistribution(
            PartitionDistribution.parseAddresses(PortAllocator.loopbackBrokerList(BROKERS)), partitions, REPLICATION_FACTOR);
        final List<RaftPeer> peers = new ArrayList<>();
        for (int b = 0; b < BROKERS; b++)
        {
            final InetSocketAddress raft = distribution.raftAddress(b);
            peers.add(RaftPeer.newBuilder().setId(RaftPeers.peerId(b))
                .setAddress(raft.getHostString() + ":" + raft.getPort()).build());
        }
        final List<RaftServer> servers = new ArrayList<>();
        try
        {
            final long startNs = System.nanoTime();
            for (int b = 0; b < BROKERS; b++)
            {
                final BrokerConfig brokers = BrokerConfig.of(b, distribution, dataDir, Map.of());
                final BrokerConfig config = electionTimeoutMin == null ? brokers :
                    brokers.withElectionTimeout(electionTimeoutMin, electionTimeoutMin.multipliedBy(2));
                final RaftServer server = RaftServer.newBuilder()
                    .setServerId(RaftPeers.peerId(b))
                    .setStateMachineRegistry(groupId -> new ApplyingStateMachine())
                    .setProperties(RaftSettings.serverProperties(config, distribution.raftAddress(b)))
                    .setOption(RaftStorage.StartupOption.FORMAT)
                    .build();
                server.start();
                servers.add(server);
            }
            final ClientId clientId = ClientId.randomId();
            final AtomicLong callIds = new AtomicLong();
            final List<RaftGroupId> groupIds = new ArrayList<>();
            for (int p = 1; p <= partitions; p++)
            {
                final RaftGroup group = RaftGroup.valueOf(
                    RaftGroupId.valueOf(UUID.nameUUIDFromBytes(("bare-" + p).getBytes(StandardCharsets.UTF_8))), peers);
                groupIds.add(group.getGroupId());
                for (final RaftServer server : servers)
                {
                    final RaftClientReply reply = server.groupManagement(
                        GroupManagementRequest.newAdd(clientId, server.getId(), callIds.incrementAndGet(), group));
                    if (!reply.isSuccess())
                    {
                        throw new IOException("cannot add bare group " + p + ": " + reply.getException());
                    }
                }
            }
            Await.until("a leader in each of the " + partitions + " bare groups", Duration.ofMinutes(2), () ->
            {
                for (final RaftGroupId groupId : groupIds)
                {
                    boolean led = false;
                    for (final RaftServer server : servers)
                    {
                        try
                        {
                            led |= server.getDivision(groupId).getInfo().isLeaderReady();
                        }
                        catch (final IOException e)
                        {
                            throw new java.io.UncheckedIOException(e);
                        }
                    }
                    if (!led)
                    {
                        return false;
                    }
                }
                return true;
            });
            run.log("bare Ratis: %d groups on %d servers led after %.1f s; settling %d s",
                partitions, BROKERS, (System.nanoTime() - startNs) / 1e9, settleSeconds);
            Thread.sleep(TimeUnit.SECONDS.toMillis(settleSeconds));
            return IdleCpu.measure(ProcessHandle.current().pid(), measureSeconds);
        }
        finally
        {
            for (final RaftServer server : servers)
            {
                server.close();
            }
            SluiceCluster.deleteRecursively(dataDir);
        }
    }


    // ------------------------------------------------------------------------------------------- /proc

    /**
     * A process's CPU over a window: whole cores (user + system of {@code /proc/<pid>/stat}, so GC and JIT count), its
     * Java thread count, and cores by thread family from {@code jcmd <pid> Thread.print}'s per-thread {@code cpu=}
     * (the thread's full name with group ids and numbers dropped: every partition's StateMachineUpdater is one family).
     */
    private record IdleCpu(double cores, int threads, Map<String, Double> coresByFamily)
    {
        private static final Pattern THREAD_LINE =
            Pattern.compile("^\"(.*)\" .*cpu=([0-9.]+)(ms|s) .*nid=(0x[0-9a-f]+|[0-9]+) ");

        static IdleCpu measure(final long pid, final int seconds) throws IOException, InterruptedException
        {
            final long processBefore = ProcCpu.ticks(pid);
            final Map<String, ThreadCpu> before = threadCpu(pid);
            final long startNs = System.nanoTime();
            Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
            final long processAfter = ProcCpu.ticks(pid);
            final double elapsed = (System.nanoTime() - startNs) / 1e9;
            final Map<String, ThreadCpu> after = threadCpu(pid);
            final Map<String, Double> byFamily = new HashMap<>();
            after.forEach((nid, now) ->
            {
                final ThreadCpu then = before.get(nid);
                final double used = now.cpuMs() - (then == null ? 0 : then.cpuMs());
                byFamily.merge(now.family(), used / 1000 / elapsed, Double::sum);
            });
            byFamily.values().removeIf(cores -> cores <= 0);
            return new IdleCpu((processAfter - processBefore) / ProcCpu.TICKS_PER_SECOND / elapsed, after.size(),
                new LinkedHashMap<>(byFamily));
        }

        private record ThreadCpu(String family, double cpuMs)
        {
        }

        /** Every thread's CPU so far by native id, from one thread dump ({@code jcmd} of this JDK). */
        private static Map<String, ThreadCpu> threadCpu(final long pid) throws IOException, InterruptedException
        {
            final Process jcmd = new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), Long.toString(pid), "Thread.print")
                .redirectErrorStream(true).start();
            final String dump = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (jcmd.waitFor() != 0)
            {
                throw new IOException("jcmd " + pid + " Thread.print failed: " + dump);
            }
            final Map<String, ThreadCpu> threads = new HashMap<>();
            for (final String line : dump.split("\n"))
            {
                final Matcher matcher = THREAD_LINE.matcher(line);
                if (matcher.find())
                {
                    final double cpu = Double.parseDouble(matcher.group(2)) * ("s".equals(matcher.group(3)) ? 1000 : 1);
                    threads.put(matcher.group(4), new ThreadCpu(family(matcher.group(1)), cpu));
                }
            }
            return threads;
        }

        /** A thread's family: its name without Raft group ids and numbers, separators folded, lower case. */
        static String family(final String name)
        {
            final String family = name.replaceAll("group-[0-9A-Fa-f]+", "group").replaceAll("[0-9]+", "")
                .replaceAll("[^A-Za-z]+", "_").replaceAll("^_|_$", "").toLowerCase(java.util.Locale.ROOT);
            return family.isEmpty() ? "unnamed" : family;
        }
    }
}
