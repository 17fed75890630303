package io.sluice.qa.cluster;

import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * A Sluice cluster of separate JVMs, on loopback unless {@link Builder#hosts} places them elsewhere: N brokers and one or more gateways (each on its own client and
 * management ports, bound to loopback), each started from {@code sluice.jar} (system property {@code sluice.jar}) with
 * its own log file. Gateway 0 is "the gateway" of {@link #gateway()} and {@link #client()}.
 * <p>
 * Layout of the run directory:
 * <pre>
 *   logs/broker-&lt;id&gt;.log, logs/gateway.log   stdout + stderr of each process, appended across restarts
 *   logs/gateway-&lt;i&gt;.log                     the same of gateway i (from 1), when there are more
 *   data/                                    the shared sluice.data-dir (broker-&lt;id&gt;/, exports/file/)
 *   pids                                     every pid started, so a crashed run's children can be killed
 * </pre>
 * Every child is killed by {@link #close()} and, should the test JVM exit first, by a shutdown hook. Every
 * wait is bounded. Not thread-safe: one test thread drives the cluster (the gateway client is thread-safe).
 */
public final class SluiceCluster implements AutoCloseable
{
    public static final String JAR_PROPERTY = "sluice.jar";
    public static final String JVM_OPTIONS_PROPERTY = "sluice.qa.jvmOptions";
    /** Small heaps and a fast-starting JIT: the tests start many JVMs on 2 shared cores. */
    public static final List<String> DEFAULT_JVM_OPTIONS = List.of(
        "-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto");
    /**
     * Multiplies every harness wait (not the contract's latency bounds): {@code -Dsluice.qa.timeoutScale=3} for a
     * machine shared with other heavy work. With it, also consider {@code -Djunit.jupiter.execution.timeout.mode=disabled}.
     */
    public static final String TIMEOUT_SCALE_PROPERTY = "sluice.qa.timeoutScale";
    public static final Duration STARTUP_TIMEOUT = scaled(Duration.ofSeconds(180));
    public static final Duration FAILOVER_TIMEOUT = scaled(Duration.ofSeconds(60));
    private static final Duration STOP_GRACE = Duration.ofSeconds(20);
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);

    private final Path runDirectory;
    private final Path dataDirectory;
    private final int partitionCount;
    private final int replicationFactor;
    private final List<InetSocketAddress> brokerAddresses;
    /** Each broker's process; replaced by {@link #reconfigureBroker} while the broker is down. */
    private final List<SluiceProcess> brokers;
    /** Each broker's command as built, which {@link #reconfigureBroker} adds to. */
    private final List<List<String>> brokerCommands = new ArrayList<>();
    private final Path pidFile;
    private final PartitionDistribution distribution;
    private final List<SluiceProcess> gateways;
    private final List<GatewayClient> clients;
    private final String token;
    private final Duration requestTimeout;
    private final ClusterHosts hosts;
    /** The file exporter's output as the current user sees it: {@link #readExportsFromNow} narrows it. */
    private volatile ExportFiles exports;
    private boolean closed;

    private SluiceCluster(final Builder builder)
    {
        this.runDirectory = builder.runDirectory.toAbsolutePath();
        this.dataDirectory = runDirectory.resolve("data");
        this.partitionCount = builder.partitions;
        this.replicationFactor = builder.replicationFactor;
        this.token = builder.token;
        this.requestTimeout = builder.requestTimeout;
        final Path jar = jar();
        this.pidFile = runDirectory.resolve("pids");
        SluiceProcess.killLeftovers(pidFile, runDirectory);

        final List<InetSocketAddress> addresses = new ArrayList<>();
        this.hosts = builder.hosts;
        for (int i = 0; i < builder.brokers; i++)
        {
            addresses.add(new InetSocketAddress(hosts.brokerAddress(i), PortAllocator.freePortPair()));
        }
        this.brokerAddresses = List.copyOf(addresses);
        this.distribution = new PartitionDistribution(brokerAddresses, partitionCount, replicationFactor);

        final Map<String, String> common = new LinkedHashMap<>();
        common.put("sluice.cluster.brokers", brokerList());
        common.put("sluice.cluster.partitions", Integer.toString(partitionCount));
        common.put("sluice.cluster.replication-factor", Integer.toString(replicationFactor));
        common.put("sluice.data-dir", dataDirectory.toString());
        common.putAll(builder.properties);

        final List<SluiceProcess> brokerProcesses = new ArrayList<>();
        for (int id = 0; id < builder.brokers; id++)
        {
            final Map<String, String> properties = new LinkedHashMap<>(common);
            properties.put("sluice.broker.node-id", Integer.toString(id));
            properties.putAll(builder.brokerProperties);
            properties.putAll(builder.oneBrokerProperties.getOrDefault(id, Map.of()));
            final List<String> command = new ArrayList<>(hosts.launcher("broker-" + id));
            command.addAll(SluiceProcess.javaCommand(jar, withGcLog(builder.jvmOptions, "broker-" + id), "broker",
                arguments(properties)));
            brokerCommands.add(command);
            brokerProcesses.add(new SluiceProcess("broker-" + id, command,
                runDirectory, runDirectory.resolve("logs").resolve("broker-" + id + ".log"), pidFile));
        }
        this.brokers = new java.util.concurrent.CopyOnWriteArrayList<>(brokerProcesses);

        final String scheme = builder.httpsCa == null ? "http" : "https";
        final List<SluiceProcess> gatewayProcesses = new ArrayList<>();
        final List<GatewayClient> gatewayClients = new ArrayList<>();
        for (int i = 0; i < builder.gateways; i++)
        {
            final int clientPort = PortAllocator.freePort();
            final int managementPort = PortAllocator.freePort();
            final String host = hosts.gatewayAddress(i).getHostAddress();
            final Map<String, String> gatewayProperties = new LinkedHashMap<>(common);
            gatewayProperties.put("server.port", Integer.toString(clientPort));
            gatewayProperties.put("server.address", host);
            gatewayProperties.put("management.server.port", Integer.toString(managementPort));
            gatewayProperties.put("management.server.address", host);
            if (token != null)
            {
                gatewayProperties.put("sluice.management.token", token);
            }
            if (requestTimeout != null)
            {
                gatewayProperties.put("sluice.gateway.request-timeout", requestTimeout.toMillis() + "ms");
            }
            gatewayProperties.putAll(builder.gatewayProperties);
            final String name = i == 0 ? "gateway" : "gateway-" + i;
            final List<String> command = new ArrayList<>(hosts.launcher(name));
            command.addAll(SluiceProcess.javaCommand(jar, withGcLog(builder.jvmOptions, name), "gateway",
                arguments(gatewayProperties)));
            gatewayProcesses.add(new SluiceProcess(name, command,
                runDirectory, runDirectory.resolve("logs").resolve(name + ".log"), pidFile));
            final String uriHost = host.contains(":") ? "[" + host + "]" : host;
            gatewayClients.add(new GatewayClient(
                URI.create(scheme + "://" + uriHost + ":" + clientPort), URI.create(scheme + "://" + uriHost + ":" + managementPort),
                token, CALL_TIMEOUT, builder.httpsCa == null ? null : trusting(builder.httpsCa)));
        }
        this.gateways = List.copyOf(gatewayProcesses);
        this.clients = List.copyOf(gatewayClients);
        this.exports = new ExportFiles(dataDirectory.resolve("exports").resolve("file"));
    }

    /** TLS trusting exactly the PEM certificates in {@code ca}. */
    public static SSLContext trusting(final Path ca)
    {
        try (InputStream in = Files.newInputStream(ca))
        {
            final KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
            trust.load(null, null);
            int i = 0;
            for (final Certificate certificate : CertificateFactory.getInstance("X.509").generateCertificates(in))
            {
                trust.setCertificateEntry("ca-" + i++, certificate);
            }
            final TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init(trust);
            final SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, factory.getTrustManagers(), null);
            return context;
        }
        catch (final IOException | GeneralSecurityException ex)
        {
            throw new IllegalArgumentException("cannot trust " + ca + ": " + ex, ex);
        }
    }

    public static Builder builder(final Path runDirectory)
    {
        return new Builder(runDirectory);
    }

    /** {@code wait} times {@value #TIMEOUT_SCALE_PROPERTY} (default 1). */
    public static Duration scaled(final Duration wait)
    {
        final double scale = Double.parseDouble(System.getProperty(TIMEOUT_SCALE_PROPERTY, "1"));
        if (!(scale > 0))
        {
            throw new IllegalArgumentException(TIMEOUT_SCALE_PROPERTY + " must be positive, was " + scale);
        }
        return Duration.ofMillis((long)(wait.toMillis() * scale));
    }

    /** The jar named by system property {@code sluice.jar}; fails clearly when it is not built. */
    public static Path jar()
    {
        final String value = System.getProperty(JAR_PROPERTY);
        if (value == null || value.isBlank())
        {
            throw new IllegalStateException("system property " + JAR_PROPERTY + " is not set (qa/pom.xml passes it)");
        }
        final Path jar = Path.of(value).toAbsolutePath().normalize();
        if (!Files.isRegularFile(jar))
        {
            throw new IllegalStateException(jar + " does not exist: build it first (mvn -B -DskipTests package)");
        }
        return jar;
    }

    /**
     * The options plus a GC log of the child's own, one file a JVM start ({@code logs/<name>-gc-<pid>.log}): when a
     * child stops answering for a while, it tells a collection pause from a machine that gave it no CPU.
     */
    private List<String> withGcLog(final List<String> jvmOptions, final String name)
    {
        final List<String> options = new ArrayList<>(jvmOptions);
        options.add("-Xlog:gc:file=" + runDirectory.resolve("logs").resolve(name + "-gc-%p.log") + ":time,uptime");
        return options;
    }

    /** JVM options of the children: system property {@code sluice.qa.jvmOptions} or the defaults. */
    public static List<String> configuredJvmOptions()
    {
        final String value = System.getProperty(JVM_OPTIONS_PROPERTY);
        if (value == null || value.isBlank())
        {
            return DEFAULT_JVM_OPTIONS;
        }
        return Arrays.stream(value.trim().split("\\s+")).toList();
    }

    static List<String> arguments(final Map<String, String> properties)
    {
        final List<String> args = new ArrayList<>();
        properties.forEach((name, value) -> args.add("--" + name + "=" + value));
        return args;
    }

    // ---------------------------------------------------------------- lifecycle

    /** Starts every broker, then every gateway; does not wait (see {@link #awaitReady()}). */
    public SluiceCluster start()
    {
        for (int id = 0; id < brokers.size(); id++)
        {
            startBroker(id);
        }
        for (int i = 0; i < gateways.size(); i++)
        {
            startGateway(i);
        }
        return this;
    }

    public void startBroker(final int brokerId)
    {
        broker(brokerId).start();
        log("started broker " + brokerId + " (pid " + broker(brokerId).pid() + ")");
    }

    /** Starts gateway 0. */
    public void startGateway()
    {
        startGateway(0);
    }

    public void startGateway(final int index)
    {
        final SluiceProcess gateway = gateway(index);
        gateway.start();
        log("started " + gateway.name() + " (pid " + gateway.pid() + "), client API " + client(index).clientBase() +
            ", management API " + client(index).managementBase());
    }

    /**
     * SIGKILL, then (with the gateway running) wait until the gateway's polled view shows every pair of the broker
     * UNKNOWN: until then the view still describes the dead broker, and a following {@link #awaitBrokerAvailable}
     * or leader wait would return at once from that stale view.
     */
    public void killBroker(final int brokerId)
    {
        broker(brokerId).kill();
        log("SIGKILLed broker " + brokerId);
        if (gateway().isAlive() && !gateway().isSuspended())
        {
            awaitGatewaySeesDown(brokerId);
        }
    }

    private void awaitGatewaySeesDown(final int brokerId)
    {
        final long start = System.nanoTime();
        Await.until("the gateway to report every pair of killed broker " + brokerId + " UNKNOWN", FAILOVER_TIMEOUT, () ->
        {
            final ExportingStatus status;
            try
            {
                status = client().exporting();
            }
            catch (final GatewayException ex)
            {
                return false;
            }
            return pairsOf(brokerId).stream().allMatch(pair -> status.pair(pair.brokerId(), pair.partitionId())
                .map(state -> "UNKNOWN".equals(state.state())).orElse(true));
        });
        log("gateway saw broker " + brokerId + " down after " + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms");
    }

    /** SIGTERM and a bounded wait; returns the exit code. */
    public int stopBroker(final int brokerId)
    {
        return broker(brokerId).stop(STOP_GRACE);
    }

    /** SIGSTOP; remember {@link #resumeBroker} (close() kills suspended brokers too). */
    public void suspendBroker(final int brokerId)
    {
        broker(brokerId).suspend();
        log("SIGSTOPped broker " + brokerId);
    }

    /** SIGCONT. */
    public void resumeBroker(final int brokerId)
    {
        broker(brokerId).resume();
        log("SIGCONTed broker " + brokerId);
    }

    /**
     * Broker {@code brokerId}, which must be down, runs from its next start with {@code properties} added to the
     * settings it was built with (each call starts again from those: a setting given before is gone), e.g. another
     * exporter. Its log goes on in the same file.
     */
    public void reconfigureBroker(final int brokerId, final Map<String, String> properties)
    {
        final SluiceProcess old = broker(brokerId);
        if (old.isAlive())
        {
            throw new IllegalStateException("broker " + brokerId + " is running: stop it before reconfiguring it");
        }
        final List<String> command = new ArrayList<>(brokerCommands.get(brokerId));
        command.addAll(arguments(properties));
        brokers.set(brokerId, new SluiceProcess(old.name(), command, runDirectory, old.logFile(), pidFile));
        log("broker " + brokerId + " reconfigured with " + properties);
    }

    /** SIGKILL if running, then start again on the same data. */
    public void restartBroker(final int brokerId)
    {
        if (broker(brokerId).isAlive())
        {
            killBroker(brokerId);
        }
        startBroker(brokerId);
    }

    /** Deletes {@code <data-dir>/broker-<id>/}; the broker must be down. */
    public void deleteBrokerData(final int brokerId)
    {
        if (broker(brokerId).isAlive())
        {
            throw new IllegalStateException("broker " + brokerId + " is running; stop or kill it before deleting its data");
        }
        deleteRecursively(brokerDataDirectory(brokerId));
        log("deleted " + brokerDataDirectory(brokerId));
    }

    /** SIGKILLs gateway 0. */
    public void killGateway()
    {
        killGateway(0);
    }

    public void killGateway(final int index)
    {
        gateway(index).kill();
        log("SIGKILLed " + gateway(index).name());
    }

    public boolean isBrokerRunning(final int brokerId)
    {
        return broker(brokerId).isAlive() && !broker(brokerId).isSuspended();
    }

    /** Waits until every running gateway reports readiness UP; fails fast when a child died meanwhile. */
    public void awaitReady()
    {
        awaitReady(STARTUP_TIMEOUT);
    }

    public void awaitReady(final Duration timeout)
    {
        final long start = System.nanoTime();
        for (int i = 0; i < gateways.size(); i++)
        {
            if (i > 0 && !gateways.get(i).isAlive())
            {
                continue; // not started, or killed on purpose
            }
            final GatewayClient client = clients.get(i);
            Await.until(gateways.get(i).name() + " readiness UP at " + client.managementBase() +
                "/actuator/health/readiness", timeout, () ->
            {
                requireStartedChildrenAlive();
                return client.isReady();
            });
        }
        log((gateways.size() == 1 ? "gateway" : "gateways") + " ready after " +
            Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms");
    }

    /** One line on the test's stdout (surefire keeps it per test class), prefixed with the run folder's name. */
    public void log(final String line)
    {
        System.out.println("[sluice-qa " + runDirectory.getParent().getFileName() + "/" + runDirectory.getFileName() +
            "] " + line);
    }

    /**
     * Waits until every partition is led by its preferred broker, as the gateway's cluster view shows it. Brokers hand
     * leaderships back to their preferred brokers a few seconds after a start (automatic balance): a test whose calls
     * go to a partition's leader (a backfill's reset reads every leader's positions) waits for that first, so it
     * does not meet a leader that is moving. Returns how long it waited.
     */
    public Duration awaitPreferredLeaders()
    {
        final long start = System.nanoTime();
        Await.until("every partition led by its preferred broker", FAILOVER_TIMEOUT, () ->
        {
            requireStartedChildrenAlive();
            return client().preferredBrokersLead();
        });
        final Duration waited = Duration.ofNanos(System.nanoTime() - start);
        log("preferred leaders after " + waited.toMillis() + " ms");
        return waited;
    }

    /** Waits until every partition has exactly one leader, on a running broker, as the gateway reports it. */
    public ExportingStatus awaitLeaders()
    {
        return awaitLeaders(FAILOVER_TIMEOUT);
    }

    public ExportingStatus awaitLeaders(final Duration timeout)
    {
        final long start = System.nanoTime();
        final ExportingStatus leaders = Await.value("a leader on a running broker for each of partitions 1.." + partitionCount, timeout, () ->
        {
            requireStartedChildrenAlive();
            final ExportingStatus status = client().exporting();
            for (int partitionId = 1; partitionId <= partitionCount; partitionId++)
            {
                final Optional<Integer> leader = status.leaderOf(partitionId);
                if (leader.isEmpty() || !isBrokerRunning(leader.get()))
                {
                    return Optional.empty();
                }
            }
            return Optional.of(status);
        });
        log("leaders on running brokers after " + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms");
        return leaders;
    }

    /** Waits until the gateway reports a known state (not UNKNOWN) for every pair of the broker. */
    public void awaitBrokerAvailable(final int brokerId)
    {
        Await.until("broker " + brokerId + " available through the gateway", STARTUP_TIMEOUT, () ->
        {
            requireStartedChildrenAlive();
            final ExportingStatus status = client().exporting();
            for (final PartitionReplica pair : pairsOf(brokerId))
            {
                final Optional<PairState> state = status.pair(pair.brokerId(), pair.partitionId());
                if (state.isEmpty() || state.get().state() == null || "UNKNOWN".equals(state.get().state()))
                {
                    return false;
                }
            }
            return true;
        });
    }

    /** Kills every child. Keeps the run directory (the caller decides whether to delete it). Idempotent. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        for (final SluiceProcess gateway : gateways)
        {
            gateway.kill();
        }
        for (final SluiceProcess broker : brokers)
        {
            broker.kill();
        }
    }

    // ---------------------------------------------------------------- topology (CONTRACT §1 placement)

    public int brokerCount()
    {
        return brokers.size();
    }

    public int partitionCount()
    {
        return partitionCount;
    }

    /** The cluster's brokers, partitions and placement, as every child was configured with them. */
    public PartitionDistribution distribution()
    {
        return distribution;
    }

    /** Brokers replicating the partition, in placement order (the product's own placement). */
    public List<Integer> replicasOf(final int partitionId)
    {
        return distribution.replicasOf(partitionId);
    }

    /** The pairs of one broker. */
    public Set<PartitionReplica> pairsOf(final int brokerId)
    {
        final Set<PartitionReplica> pairs = new TreeSet<>();
        for (final int partitionId : distribution.partitionsOf(brokerId))
        {
            pairs.add(new PartitionReplica(brokerId, partitionId));
        }
        return pairs;
    }

    /** Every (broker, partition) pair of the cluster. */
    public Set<PartitionReplica> allPairs()
    {
        return new TreeSet<>(distribution.replicas());
    }

    // ---------------------------------------------------------------- access

    /** The client of gateway 0. */
    public GatewayClient client()
    {
        return client(0);
    }

    public GatewayClient client(final int index)
    {
        return clients.get(checkGateway(index));
    }

    public int gatewayCount()
    {
        return gateways.size();
    }

    public ExportFiles exports()
    {
        return exports;
    }

    /**
     * From now on {@link #exports()} shows only what is exported after this call: a test class on a shared cluster
     * sees its own records, not the lines (and backfills) of the classes before it.
     */
    public void readExportsFromNow()
    {
        exports = exports.whole().fromEnd(partitionCount);
    }

    /** {@link #exports()} shows the whole files again. */
    public void readWholeExports()
    {
        exports = exports.whole();
    }

    public List<ExportedRecord> exportedRecords(final int partitionId)
    {
        return exports.records(partitionId);
    }

    /** Shortcut for {@code client().management(method, path, body)}. */
    public HttpAnswer management(final String method, final String path, final String body)
    {
        return client().management(method, path, body);
    }

    public InetSocketAddress brokerCommandAddress(final int brokerId)
    {
        return brokerAddresses.get(brokerId);
    }

    public String brokerList()
    {
        final StringBuilder list = new StringBuilder();
        for (final InetSocketAddress address : brokerAddresses)
        {
            if (list.length() > 0)
            {
                list.append(',');
            }
            list.append(address.getAddress().getHostAddress()).append(':').append(address.getPort());
        }
        return list.toString();
    }

    public SluiceProcess broker(final int brokerId)
    {
        if (brokerId < 0 || brokerId >= brokers.size())
        {
            throw new IllegalArgumentException("no broker " + brokerId + " in a cluster of " + brokers.size());
        }
        return brokers.get(brokerId);
    }

    /** Gateway 0. */
    public SluiceProcess gateway()
    {
        return gateway(0);
    }

    public SluiceProcess gateway(final int index)
    {
        return gateways.get(checkGateway(index));
    }

    private int checkGateway(final int index)
    {
        if (index < 0 || index >= gateways.size())
        {
            throw new IllegalArgumentException("no gateway " + index + " in a cluster of " + gateways.size());
        }
        return index;
    }

    public Path runDirectory()
    {
        return runDirectory;
    }

    public Path dataDirectory()
    {
        return dataDirectory;
    }

    public Path brokerDataDirectory(final int brokerId)
    {
        return dataDirectory.resolve("broker-" + brokerId);
    }

    public Duration requestTimeout()
    {
        return requestTimeout;
    }

    public String token()
    {
        return token;
    }

    /** Each child's state and the tail of its log, for a failure report. */
    public String describe(final int tailLines)
    {
        final StringBuilder text = new StringBuilder("cluster in ").append(runDirectory).append(System.lineSeparator());
        final List<SluiceProcess> all = new ArrayList<>(brokers);
        all.addAll(gateways);
        for (final SluiceProcess process : all)
        {
            text.append("----- ").append(process.name())
                .append(process.isAlive() ? " running" + (process.isSuspended() ? " (SIGSTOPped)" : "") :
                    " exited " + process.exitCode().map(String::valueOf).orElse("(never started)"))
                .append(", log ").append(process.logFile())
                .append(process.dumpThreads().map(dump -> ", threads " + dump).orElse(""))
                .append(", last ").append(tailLines).append(" lines:")
                .append(System.lineSeparator())
                .append(process.logTail(tailLines)).append(System.lineSeparator());
        }
        return text.toString();
    }

    private void requireStartedChildrenAlive()
    {
        final List<SluiceProcess> all = new ArrayList<>(brokers);
        all.addAll(gateways);
        for (final SluiceProcess process : all)
        {
            final Optional<Integer> exitCode = process.exitCode();
            if (exitCode.isPresent() && !process.wasKilledOnPurpose())
            {
                throw new ChildExitedException(process.name() + " exited with code " + exitCode.get() + "; log " +
                    process.logFile() + ", last lines:" + System.lineSeparator() + process.logTail(30));
            }
        }
    }

    public static void deleteRecursively(final Path directory)
    {
        if (!Files.exists(directory))
        {
            return;
        }
        try
        {
            Files.walkFileTree(directory, new SimpleFileVisitor<>()
            {
                @Override
                public FileVisitResult visitFile(final Path file, final BasicFileAttributes attrs) throws IOException
                {
                    Files.delete(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(final Path dir, final IOException ex) throws IOException
                {
                    Files.delete(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot delete " + directory, ex);
        }
    }

    /** How to build a cluster; defaults: 3 brokers, 6 partitions, replication factor 3. */
    public static final class Builder
    {
        private final Path runDirectory;
        private int brokers = 3;
        private int partitions = 6;
        private int replicationFactor = 3;
        private int gateways = 1;
        private String token;
        private Duration requestTimeout;
        private List<String> jvmOptions = configuredJvmOptions();
        private final Map<String, String> properties = new LinkedHashMap<>();
        private final Map<String, String> brokerProperties = new LinkedHashMap<>();
        private final Map<Integer, Map<String, String>> oneBrokerProperties = new LinkedHashMap<>();
        private Path httpsCa;
        private final Map<String, String> gatewayProperties = new LinkedHashMap<>();
        private ClusterHosts hosts = ClusterHosts.LOOPBACK;

        private Builder(final Path runDirectory)
        {
            this.runDirectory = runDirectory;
        }

        public Builder brokers(final int brokers)
        {
            this.brokers = brokers;
            return this;
        }

        public Builder partitions(final int partitions)
        {
            this.partitions = partitions;
            return this;
        }

        public Builder replicationFactor(final int replicationFactor)
        {
            this.replicationFactor = replicationFactor;
            return this;
        }

        /** Gateway processes (default 1), each on its own ports, all with the same settings. */
        public Builder gateways(final int gateways)
        {
            this.gateways = gateways;
            return this;
        }

        /** {@code sluice.management.token} of the gateway; the client then sends it on management calls. */
        public Builder token(final String token)
        {
            this.token = token;
            return this;
        }

        /** {@code sluice.gateway.request-timeout}. */
        public Builder requestTimeout(final Duration requestTimeout)
        {
            this.requestTimeout = requestTimeout;
            return this;
        }

        /** A property of every process. */
        public Builder property(final String name, final String value)
        {
            properties.put(name, value);
            return this;
        }

        public Builder brokerProperty(final String name, final String value)
        {
            brokerProperties.put(name, value);
            return this;
        }

        /**
         * The gateway serves https (its SSL bundle properties are the test's to give); the harness's client
         * trusts the PEM CA {@code ca}.
         */
        public Builder https(final Path ca)
        {
            this.httpsCa = ca;
            return this;
        }

        /** A property of broker {@code brokerId} only (e.g. its own certificate), over the others. */
        public Builder brokerProperty(final int brokerId, final String name, final String value)
        {
            oneBrokerProperties.computeIfAbsent(brokerId, id -> new LinkedHashMap<>()).put(name, value);
            return this;
        }

        public Builder gatewayProperty(final String name, final String value)
        {
            gatewayProperties.put(name, value);
            return this;
        }

        /**
         * Where each process runs and which address it binds (default: all on loopback). A gateway off loopback needs
         * a {@link #token}: its management API refuses a non-loopback address without one (CONTRACT §3).
         */
        public Builder hosts(final ClusterHosts hosts)
        {
            this.hosts = hosts;
            return this;
        }

        public Builder jvmOptions(final List<String> jvmOptions)
        {
            this.jvmOptions = List.copyOf(jvmOptions);
            return this;
        }

        /** Allocates ports and prepares the processes; nothing is started. */
        public SluiceCluster build()
        {
            if (brokers < 1 || partitions < 1 || replicationFactor < 1 || gateways < 1)
            {
                throw new IllegalArgumentException("brokers, partitions, replication factor and gateways must be at " +
                    "least 1, were " + brokers + ", " + partitions + ", " + replicationFactor + ", " + gateways);
            }
            return new SluiceCluster(this);
        }
    }
}
