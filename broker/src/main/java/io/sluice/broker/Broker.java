package io.sluice.broker;

import io.sluice.broker.backup.PartitionBackups;
import io.sluice.broker.backup.SinkBackups;
import io.sluice.broker.control.BackupHolds;
import io.sluice.protocol.backup.BackupStore;
import io.sluice.protocol.backup.FilesystemBackupStore;
import io.sluice.broker.backfill.BackfillRunnerConfig;
import io.sluice.broker.command.AdminPathWarmUp;
import io.sluice.broker.command.CommandApi;
import io.sluice.broker.command.StartupGate;
import io.sluice.broker.disk.DiskGuard;
import io.sluice.broker.control.BackfillClaims;
import io.sluice.broker.control.ApplyPathWarmUp;
import io.sluice.broker.control.ControlGroup;
import io.sluice.broker.control.ExportingControl;
import io.sluice.broker.exporter.ExporterRegistry;
import io.sluice.broker.partition.EmptyReplicaNudger;
import io.sluice.broker.partition.Partition;
import io.sluice.broker.raft.FailedLogRecovery;
import io.sluice.broker.raft.GroupMember;
import io.sluice.broker.raft.RaftMetadataMend;
import io.sluice.broker.raft.RaftPeers;
import io.sluice.broker.raft.ReplicatedStateAdapter;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.concurrent.CommonPool;
import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.tls.TlsModeProbe;
import io.sluice.protocol.tls.TlsFiles;
import io.sluice.protocol.transport.ConnectionLimits;
import io.sluice.protocol.transport.RequestHandler;
import io.sluice.protocol.transport.TransportConfig;
import io.sluice.protocol.transport.TransportException;
import io.sluice.protocol.transport.TransportServer;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * A Sluice broker: one Ratis server on the broker's Raft port hosting one Raft group per partition it
 * replicates, and the command/admin/topology API on its command port. Several brokers can run in one JVM
 * (no static state; threads are named {@code broker-<id>-...}).
 * <p>
 * Besides the partitions' groups the Raft server hosts the cluster control group ({@link ControlGroup}), whose
 * replicated state holds every partition's exporting state: the broker votes in it or follows it as a listener.
 * <p>
 * On-disk layout under {@code <dataDir>/broker-<id>/}:
 * <pre>
 *   LAYOUT                          the version of this layout ({@link DataLayout}); a directory without it, or of
 *                                   another version, is refused at start
 *   raft/&lt;group uuid&gt;/current/...   Ratis's log and metadata of a group (uuid from the partition id, or the control group's)
 *   raft/&lt;group uuid&gt;/sm/...        a partition state machine's snapshots and record log
 *                                   (see {@link io.sluice.broker.partition.PartitionStateMachine}), or the control
 *                                   group's snapshots ({@link io.sluice.broker.control.ControlStateMachine})
 * </pre>
 * <p>
 * Why about 700 lines: it is the broker's composition root. {@link #start} opens the command port first (a
 * {@code StartupGate} answers "starting" meanwhile), then wires every part in its order and unwinds them on a failed
 * start, {@code stop} closes them in reverse, and the scheduler's periodic tasks are one call each; what the parts do
 * lives in their packages ({@link RaftSettings}, {@code BrokerPorts}, {@code PeerModeCheck} and {@code StartPhases}
 * hold the setup's details).
 */
public final class Broker implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Broker.class);
    /** How often a broker looks for leaderships to give back to their preferred brokers. */
    static final long AUTO_REBALANCE_INTERVAL_MS = 1_000;
    /** How long a preferred replica must stay in sync before its leadership goes back to it (see {@link PreferredLeaderWatch}). */
    static final Duration AUTO_REBALANCE_STABLE = Duration.ofSeconds(3);
    /** Bound on handing the control group's leadership over when the broker stops (a transfer takes well under 1 s). */
    static final Duration CONTROL_HANDOVER_BOUND = Duration.ofSeconds(3);
    /** Scratch exporting changes applied at start (a few hundred calls of the apply path: the JIT's first tier). */
    static final int APPLY_WARM_UP_ROUNDS = 16;
    /** Bound on the start warm-up's own version-0 pause, which answers from local state (~ms warm). */
    private static final long WARM_UP_ANSWER_TIMEOUT_MS = 10_000;
    /** A certificate expiring within this window is reported (health, metric, a warning a day). */
    public static final Duration CERTIFICATE_WARNING_WINDOW = Duration.ofDays(7);

    private final BrokerConfig config;
    private final ClusterTls tls;
    private final Map<Integer, Partition> partitions;
    private final ControlGroup control;
    private final ExportingControl exportingControl;
    private final BackfillClaims backfillClaims;
    private final ScheduledExecutorService scheduler;
    private final ExecutorService adminExecutor;
    /** Closes and reopens replicas whose Raft log failed; never the admin executor, whose threads a close could hold. */
    private final ExecutorService logRecoveries;
    private final RaftServer raftServer;
    private final TransportServer transport;
    private final EmptyReplicaNudger emptyReplicaNudger;
    private final LeaderBalancer balancer;
    private final DiskGuard diskGuard;
    private final PartitionBackups backups;
    private final BackupHolds backupHolds;
    private final SinkBackups sinkBackups;
    /** {@code sluice.backup.filesystem.path}'s default (CONTRACT §8). */
    public static final String DEFAULT_BACKUP_PATH = "./sluice-backups";
    /** Per partition, the exported position at which {@link #compactForDisk} last asked for a snapshot. */
    private final Map<Integer, Long> compactedForDiskAt = new java.util.concurrent.ConcurrentHashMap<>();
    private volatile boolean closed;

    private Broker(
        final BrokerConfig config,
        final Map<Integer, Partition> partitions,
        final ControlGroup control,
        final ExportingControl exportingControl,
        final BackfillClaims backfillClaims,
        final ScheduledExecutorService scheduler,
        final ExecutorService adminExecutor,
        final ExecutorService logRecoveries,
        final RaftServer raftServer,
        final TransportServer transport,
        final EmptyReplicaNudger emptyReplicaNudger,
        final ClusterTls tls,
        final DiskGuard diskGuard,
        final PartitionBackups backups,
        final BackupHolds backupHolds,
        final SinkBackups sinkBackups)
    {
        this.diskGuard = diskGuard;
        this.backups = backups;
        this.backupHolds = backupHolds;
        this.sinkBackups = sinkBackups;
        this.balancer = new LeaderBalancer(config.nodeId(), config.distribution(), partitions, AUTO_REBALANCE_STABLE,
            System::nanoTime, this::askForRebalanceRound);
        this.config = config;
        this.tls = tls;
        this.partitions = partitions;
        this.control = control;
        this.exportingControl = exportingControl;
        this.backfillClaims = backfillClaims;
        this.scheduler = scheduler;
        this.adminExecutor = adminExecutor;
        this.logRecoveries = logRecoveries;
        this.raftServer = raftServer;
        this.transport = transport;
        this.emptyReplicaNudger = emptyReplicaNudger;
    }

    /**
     * Starts the broker; returns once the command API listens and every partition's Raft group is added.
     *
     * @throws InvalidClusterConfigException naming the setting for a node id outside the cluster, a port
     *                                       in use, an unknown exporter type or an exporter setting its
     *                                       exporter refuses.
     */
    public static Broker start(final BrokerConfig config) throws IOException
    {
        return start(config, null);
    }

    /**
     * As {@link #start(BrokerConfig)}, with mutual TLS on the command port and on Raft (gRPC) when {@code tls} is
     * not null: peers must present a certificate signed by a trusted CA.
     *
     * @throws InvalidClusterConfigException also for TLS with the Netty Raft transport, which has no TLS.
     */
    public static Broker start(final BrokerConfig config, final ClusterTls tls) throws IOException
    {
        return start(config, tls, new FilesystemBackupStore(Path.of(DEFAULT_BACKUP_PATH)));
    }

    /** As {@link #start(BrokerConfig, ClusterTls)}, uploading its partitions' backups to {@code backupStore}. */
    public static Broker start(final BrokerConfig config, final ClusterTls tls, final BackupStore backupStore)
        throws IOException
    {
        return start(config, tls, backupStore, () -> { });
    }

    /**
     * The start in its order (issue 30): the command port listens first, answering every request UNAVAILABLE
     * ({@link StartupGate}) while the TLS mode probe of the peers runs and Ratis recovers every group; then it serves.
     * {@code whileStarting} runs once the port listens and before anything else: tests hold a start there.
     */
    static Broker start(final BrokerConfig config, final ClusterTls tls, final BackupStore backupStore,
        final Runnable whileStarting) throws IOException
    {
        final long startNs = System.nanoTime();
        final PartitionDistribution distribution = config.distribution();
        final int nodeId = config.nodeId();
        distribution.checkNodeId(nodeId);
        if (CommonPool.startsThreadPerTask())
        {
            LOG.warn("broker {}: {}", nodeId, CommonPool.threadPerTaskWarning());
        }
        if (tls != null && config.raftTransport() != BrokerConfig.RaftTransport.GRPC)
        {
            throw new InvalidClusterConfigException(TlsFiles.ENABLED_SETTING, "needs the gRPC Raft transport (the " +
                config.raftTransport() + " transport of Ratis has no TLS)");
        }
        final ExporterRegistry registry = ExporterRegistry.builtIn();
        registry.validate(nodeId, config.dataDir(), config.exporters());
        final InetSocketAddress commandAddress = BrokerPorts.resolve(distribution.commandAddress(nodeId));
        final InetSocketAddress raftAddress = BrokerPorts.resolve(distribution.raftAddress(nodeId));
        BrokerPorts.checkPortFree(nodeId, commandAddress);
        BrokerPorts.checkPortFree(nodeId, raftAddress);

        // Listening before anything slow: clients and the gateway get a retriable "starting" answer instead of a
        // refused connection, and peers probing this broker's TLS mode get their answer.
        final StartupGate gate = new StartupGate(nodeId);
        final TransportServer transport;
        try
        {
            transport = TransportServer.start(commandAddress, gate, TransportConfig.defaults(), ConnectionLimits.defaults(),
                tls);
        }
        catch (final TransportException e)
        {
            throw BrokerPorts.portInUse(nodeId, commandAddress, e);
        }
        gate.step("setting up its " + distribution.partitionsOf(nodeId).size() + " partitions");
        final StartPhases phases = new StartPhases(startNs);
        phases.mark("command port listening");
        LOG.info("broker {}: command API listening on {}, answering UNAVAILABLE until its Raft groups are recovered",
            nodeId, transport.localAddress());
        try
        {
            whileStarting.run();
            // A peer on the other side of sluice.cluster.tls.enabled stops this start before anything is written: the
            // probe (up to TlsModeProbe.DEFAULT_BUDGET) runs beside the in-memory setup and is awaited before the first
            // write, the data layout of a new directory or Ratis's recovery of an existing one.
            final PeerModeCheck peerModes = PeerModeCheck.start(nodeId, tls != null,
                BrokerPorts.peersOf(distribution, nodeId), phases);
            return startServing(config, tls, backupStore, registry, raftAddress, transport, gate, phases, peerModes);
        }
        catch (final IOException | RuntimeException e)
        {
            transport.close();
            throw e;
        }
    }

    /** The start after the command port listens: the parts, Ratis (recovering every group), then the gate opens. */
    private static Broker startServing(
        final BrokerConfig config,
        final ClusterTls tls,
        final BackupStore backupStore,
        final ExporterRegistry registry,
        final InetSocketAddress raftAddress,
        final TransportServer transport,
        final StartupGate gate,
        final StartPhases phases,
        final PeerModeCheck peerModes) throws IOException
    {
        final PartitionDistribution distribution = config.distribution();
        final int nodeId = config.nodeId();
        if (!java.nio.file.Files.exists(config.brokerDir().resolve(DataLayout.FILE)))
        {
            gate.step("checking its peers' TLS mode");
            peerModes.await();
        }
        DataLayout.check(config.brokerDir());
        final DiskGuard diskGuard = DiskGuard.start(nodeId, config.brokerDir(), config.diskWatermark());
        final ScheduledExecutorService scheduler = newScheduler(nodeId, config.exporterThreads());
        // A captured partition waits this long for the gateway's cut: the gateway commits it within its own request
        // timeout, well inside this bound.
        final PartitionBackups backups = new PartitionBackups(nodeId, config.brokerDir(), backupStore, 60_000);
        final ExecutorService adminExecutor = newAdminExecutor(nodeId);
        // A full disk fails every group's log at once, and a close may wait for space: one thread a recovery.
        final ExecutorService logRecoveries = Executors.newCachedThreadPool(daemonThreads("broker-" + nodeId +
            "-log-recovery-"));
        final RaftProperties clientProperties = RaftSettings.clientProperties(config);
        final Parameters clientParameters = RaftSettings.raftTlsParameters(tls, false);
        final Map<Integer, Partition> partitions = new LinkedHashMap<>();
        final Map<RaftGroupId, Partition> byGroup = new LinkedHashMap<>();
        final ControlGroup control = new ControlGroup(nodeId, distribution, config.controlVotersInCluster(),
            new ControlListener(partitions), scheduler, clientProperties, clientParameters);
        RaftServer raftServer = null;
        try
        {
            for (final int partitionId : distribution.partitionsOf(nodeId))
            {
                final List<RaftPeer> peers = new ArrayList<>();
                for (final int replica : distribution.replicasOf(partitionId))
                {
                    peers.add(RaftPeers.peer(distribution, replica, RaftPeerRole.FOLLOWER));
                }
                final RaftGroup group = RaftGroup.valueOf(Partition.groupId(partitionId), peers);
                final Partition partition = new Partition(nodeId, partitionId, group, config.exporters(), registry,
                    config.dataDir(), scheduler, config.segmentSizeBytes(), config.exporterAckInterval(),
                    control, clientProperties, clientParameters, BackfillRunnerConfig.defaults(),
                    distribution.replicasOf(partitionId).get(0));
                partition.stateMachine().state().segmentSpace(diskGuard.segmentSpace());
                partitions.put(partitionId, partition);
                byGroup.put(group.getGroupId(), partition);
            }
            phases.mark("partitions set up");
            // Beside the recovery below: the control group's catch-up, right after it, proposes through a Raft client
            // whose first use in this JVM loads the gRPC client code: the catch-up took 1.3-3.0 s without this, 0.5-0.7 s
            // with it (bash qa/bench.sh startup, docs/bench/issue-30.md).
            final long warmStartNs = System.nanoTime();
            adminExecutor.execute(() -> control.warmClient().whenComplete((ignored, failure) ->
                LOG.info("broker {}: control group's Raft client warmed in {} ms", nodeId,
                    (System.nanoTime() - warmStartNs) / 1_000_000)));

            // Before Ratis reads them: a term or configuration file a full disk left empty (RaftMetadataMend).
            final Map<RaftGroupId, RaftGroup> hosted = new LinkedHashMap<>();
            hosted.put(ControlGroup.GROUP_ID, control.raftGroup());
            partitions.values().forEach((p) -> hosted.put(p.group().getGroupId(), p.group()));
            RaftMetadataMend.mendAll(config.brokerDir().resolve("raft"), RaftPeers.peerId(nodeId), hosted,
                RaftSettings.maxLogEntry());

            gate.step("recovering its " + (partitions.size() + 1) + " Raft groups");
            raftServer = RaftServer.newBuilder()
                .setServerId(RaftPeers.peerId(nodeId))
                .setProperties(RaftSettings.serverProperties(config, raftAddress))
                .setParameters(RaftSettings.raftTlsParameters(tls, true))
                .setStateMachineRegistry((groupId) ->
                {
                    if (groupId.equals(ControlGroup.GROUP_ID))
                    {
                        return control.stateMachine();
                    }
                    final Partition partition = byGroup.get(groupId);
                    if (partition == null)
                    {
                        throw new IllegalStateException("broker " + nodeId + " hosts no partition of group " + groupId);
                    }
                    return partition.stateMachine();
                })
                .setOption(RaftStorage.StartupOption.RECOVER)
                .build();
            for (final Partition partition : partitions.values())
            {
                partition.attach(raftServer);
            }
            control.attach(raftServer);
            final Path raftDir = config.brokerDir().resolve("raft");
            for (final Partition partition : partitions.values())
            {
                recoverFailedLogs(partition.stateMachine(), "partition " + partition.partitionId() + " on broker " + nodeId,
                    partition.member(), raftDir, diskGuard, logRecoveries, scheduler);
            }
            recoverFailedLogs(control.stateMachine(), "broker " + nodeId + ", the control group", control.member(), raftDir,
                diskGuard, logRecoveries, scheduler);
            phases.mark("Raft server built");
            gate.step("checking its peers' TLS mode");
            peerModes.await();
            gate.step("recovering its " + (partitions.size() + 1) + " Raft groups");
            try
            {
                // Ratis builds each group's division on one thread, then starts them (log, snapshot, state machine)
                // in parallel, then its RPC server.
                raftServer.start();
            }
            catch (final IOException e)
            {
                if (BrokerPorts.isBindFailure(e))
                {
                    throw BrokerPorts.portInUse(nodeId, raftAddress, e);
                }
                throw e;
            }
            int recovered = 0;
            for (final RaftGroupId ignored : raftServer.getGroupIds())
            {
                recovered++;
            }
            phases.mark("Raft server started (" + recovered + " groups recovered)");
            final Map<RaftGroup, String> groups = new LinkedHashMap<>();
            groups.put(control.raftGroup(), "the control group");
            partitions.values().forEach((p) -> groups.put(p.group(), "partition " + p.partitionId()));
            RaftSettings.addGroups(raftServer, nodeId, groups);
            control.start();
            phases.mark("groups added, control group started");
            final ExportingControl exportingControl =
                new ExportingControl(nodeId, control, partitions, config.adminTimeout());
            final BackfillClaims backfillClaims = new BackfillClaims(nodeId, control, config.exporters().keySet(),
                config.adminTimeout(), Clock.systemUTC());
            final BackupHolds backupHolds = new BackupHolds(nodeId, control, partitions, config.adminTimeout());
            final SinkBackups sinkBackups = new SinkBackups(nodeId, config.dataDir(), config.exporters(), registry);
            final Broker broker = new Broker(config, partitions, control, exportingControl, backfillClaims, scheduler,
                adminExecutor, logRecoveries,
                raftServer, transport,
                new EmptyReplicaNudger(nodeId, partitions.values(), clientProperties, clientParameters), tls, diskGuard,
                backups, backupHolds, sinkBackups);
            scheduler.scheduleWithFixedDelay(broker::checkLeadership, 250, 250, TimeUnit.MILLISECONDS);
            scheduler.scheduleWithFixedDelay(broker::compactForDisk, 2, 2, TimeUnit.SECONDS);
            scheduler.scheduleWithFixedDelay(diskGuard::refresh, 250, 250, TimeUnit.MILLISECONDS);
            if (config.autoRebalance())
            {
                scheduler.scheduleWithFixedDelay(broker::autoRebalance, AUTO_REBALANCE_INTERVAL_MS,
                    AUTO_REBALANCE_INTERVAL_MS, TimeUnit.MILLISECONDS);
            }
            if (tls != null)
            {
                scheduler.scheduleWithFixedDelay(broker::checkCertificate, 0, 1, TimeUnit.DAYS);
            }
            final CommandApi commandApi = new CommandApi(nodeId, distribution, partitions, control, exportingControl,
                backfillClaims, adminExecutor, diskGuard, backups, backupHolds, sinkBackups);
            gate.open(commandApi);
            phases.mark("serving");
            if (!partitions.isEmpty())
            {
                final int warmPartition = partitions.keySet().iterator().next();
                // Its own thread: a few hundred ms of interpreted code must not hold up an admin request meanwhile.
                final Thread warmUp = new Thread(() -> broker.warmPausePath(commandApi, warmPartition, APPLY_WARM_UP_ROUNDS),
                    "sluice-pause-warm-up-" + nodeId);
                warmUp.setDaemon(true);
                warmUp.start();
            }
            LOG.info("broker {} started: command API on {}, Raft on {} ({}{}), partitions {}, control group {}, data in {}",
                nodeId, transport.localAddress(), raftAddress, config.raftTransport(), tls == null ? "" : ", mutual TLS",
                partitions.keySet(), nodeId < config.controlVotersInCluster() ? "voter" : "listener", config.brokerDir());
            LOG.info("broker {} start: {}", nodeId, phases);
            return broker;
        }
        catch (final IOException | RuntimeException e)
        {
            control.close();
            partitions.values().forEach(Partition::close);
            if (raftServer != null)
            {
                closeQuietly(raftServer, nodeId);
            }
            scheduler.shutdownNow();
            adminExecutor.shutdownNow();
            logRecoveries.shutdownNow();
            backups.close();
            throw e;
        }
    }

    /**
     * Runs what a pause costs this broker, without changing anything, so the first pause after a start runs compiled
     * code here, not interpreted code on every broker at once (issue 30): a version-0 pause of one partition through
     * its own command API ({@link AdminPathWarmUp}), the control replica's apply of encoded changes on a scratch state
     * and the partitions' obey checks ({@link ApplyPathWarmUp}). The control group's commits are warmed once its
     * replica caught up ({@code ControlGroup}).
     */
    private void warmPausePath(final RequestHandler commandApi, final int warmPartition, final int rounds)
    {
        final long startNs = System.nanoTime();
        try
        {
            final String answer = AdminPathWarmUp.run(commandApi, config.nodeId(), warmPartition)
                .get(WARM_UP_ANSWER_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            final int waits = ApplyPathWarmUp.run(config.nodeId(), config.distribution().partitionCount(), rounds);
            final int obeyed = ApplyPathWarmUp.obeyChecks(
                partitions.values().stream().map(Partition::exporting).toList(), rounds);
            LOG.info("broker {}: pause path warmed in {} ms, changing nothing: a version-0 pause of partition {} " +
                "answered {}; {} exporting changes applied to a scratch control state ({} version waits); {} obey checks",
                config.nodeId(), (System.nanoTime() - startNs) / 1_000_000, warmPartition, answer, rounds, waits, obeyed);
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
        }
        catch (final ExecutionException | TimeoutException | RuntimeException e)
        {
            LOG.info("broker {}: pause path not warmed: {}", config.nodeId(), e.toString());
        }
    }

    /** Routes the control group's news to the partitions: a changed state or a caught-up replica wakes exporters. */
    private record ControlListener(Map<Integer, Partition> partitions) implements ControlGroup.Listener
    {
        @Override
        public void onExportingChanged(final int partitionId)
        {
            final Partition partition = partitions.get(partitionId);
            if (partition != null)
            {
                partition.onExportingStateChanged();
            }
        }

        @Override
        public void onCaughtUp()
        {
            partitions.values().forEach(Partition::onExportingStateChanged);
        }
    }

    /**
     * While appends are refused for disk, takes a snapshot of every partition whose exporters acknowledged more since
     * the last one: the snapshot compacts the log, and without appends the entry count that usually triggers it never
     * comes.
     */
    private void compactForDisk()
    {
        if (closed || diskGuard.refusal() == null)
        {
            return;
        }
        for (final Partition partition : partitions.values())
        {
            final long exported = partition.status().exportedPosition();
            final Long before = compactedForDiskAt.put(partition.partitionId(), exported);
            if (before == null || exported > before)
            {
                partition.snapshotNow(10_000).whenComplete((reply, error) ->
                {
                    if (error != null)
                    {
                        LOG.warn("broker {}: partition {}: snapshot to free disk space failed: {}", config.nodeId(),
                            partition.partitionId(), error.toString());
                    }
                });
            }
        }
    }

    /** Backs up the leader-ready notification: starts exporters on a leader that missed it. */
    private void checkLeadership()
    {
        if (closed)
        {
            return;
        }
        for (final Partition partition : partitions.values())
        {
            try
            {
                partition.checkLeadership();
            }
            catch (final RuntimeException e)
            {
                LOG.warn("broker {}: leadership check of partition {} failed", config.nodeId(),
                    partition.partitionId(), e);
            }
        }
        try
        {
            emptyReplicaNudger.check();
        }
        catch (final RuntimeException e)
        {
            LOG.warn("broker {}: check for emptied replicas failed", config.nodeId(), e);
        }
    }

    /** The next automatic balance round, now rather than at the periodic one: a transfer just ended. */
    private void askForRebalanceRound()
    {
        try
        {
            scheduler.execute(this::autoRebalance);
        }
        catch (final RejectedExecutionException e)
        {
            // The broker is stopping: no more rounds.
        }
    }

    private void autoRebalance()
    {
        if (closed)
        {
            return;
        }
        try
        {
            balancer.autoRebalance();
        }
        catch (final RuntimeException e)
        {
            LOG.warn("broker {}: leader balance round failed", config.nodeId(), e);
        }
    }

    /** Partition ids this broker leads now, ascending. */
    public List<Integer> ledPartitions()
    {
        return balancer.ledPartitions();
    }

    /** Warns, once a day, while this broker's certificate expires within {@link #CERTIFICATE_WARNING_WINDOW}. */
    private void checkCertificate()
    {
        if (closed || tls == null)
        {
            return;
        }
        if (certificateExpiresSoon())
        {
            LOG.warn("broker {}: the cluster TLS certificate {} expires at {}, within {} days: replace {}",
                config.nodeId(), tls.subject(), tls.notAfter(), CERTIFICATE_WARNING_WINDOW.toDays(),
                tls.files().certificate());
        }
    }

    /** The cluster TLS settings in use, or null when TLS is off. */
    public ClusterTls tls()
    {
        return tls;
    }

    /** Whether TLS is on and this broker's certificate expires within {@link #CERTIFICATE_WARNING_WINDOW}. */
    public boolean certificateExpiresSoon()
    {
        return tls != null && tls.expiresWithin(CERTIFICATE_WARNING_WINDOW);
    }

    public int nodeId()
    {
        return config.nodeId();
    }

    public BrokerConfig config()
    {
        return config;
    }

    /** The bound command-API address. */
    public InetSocketAddress commandAddress()
    {
        return transport.localAddress();
    }

    /** The partitions this broker replicates, by id. */
    public Map<Integer, Partition> partitions()
    {
        return partitions;
    }

    public Partition partition(final int partitionId)
    {
        return partitions.get(partitionId);
    }

    /** The command API handler, for driving the broker in-process. */
    public CommandApi commandApi()
    {
        return new CommandApi(config.nodeId(), config.distribution(), partitions, control, exportingControl, backfillClaims,
            adminExecutor, diskGuard, backups, backupHolds, sinkBackups);
    }

    /** Watches this broker's data directory's volume; refuses appends past the disk watermark. */
    public DiskGuard diskGuard()
    {
        return diskGuard;
    }

    /** This broker's member of the cluster control group. */
    public ControlGroup control()
    {
        return control;
    }

    /** The backfill claims as this broker serves them (issue 15). */
    public BackfillClaims backfillClaims()
    {
        return backfillClaims;
    }

    /** Pauses, soft pauses and resumes of this broker's pairs, as the admin API runs them. */
    public ExportingControl exportingControl()
    {
        return exportingControl;
    }

    public RaftServer raftServer()
    {
        return raftServer;
    }

    /**
     * Controlled shutdown: hands every leadership held here to an in-sync replica (bounded by
     * {@link BrokerConfig#shutdownTimeout()}), then stops serving and closes. Clients see one short leader change
     * per partition instead of waiting out an election timeout.
     */
    @Override
    public void close()
    {
        stop(true);
    }

    /**
     * Stops at once without handing any leadership over, as a crash would leave the cluster: the partitions led
     * here wait an election timeout for a new leader. For failover tests.
     */
    public void halt()
    {
        stop(false);
    }

    private void stop(final boolean handOver)
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (handOver)
        {
            final List<Integer> led = balancer.ledPartitions();
            if (led.isEmpty())
            {
                LOG.info("broker {} stopping: leads no partition, nothing to hand over", config.nodeId());
            }
            else
            {
                LOG.info("broker {} stopping: handing over the leadership of partition(s) {} (bound {} ms)",
                    config.nodeId(), led.stream().map(String::valueOf).collect(Collectors.joining(", ")),
                    config.shutdownTimeout().toMillis());
            }
            try
            {
                balancer.handOverLeadership(config.shutdownTimeout());
            }
            catch (final RuntimeException e)
            {
                LOG.warn("broker {}: controlled shutdown failed, stopping anyway", config.nodeId(), e);
            }
            control.handOverLeadership(CONTROL_HANDOVER_BOUND);
        }
        else
        {
            LOG.info("broker {} halting without handing over its leaderships", config.nodeId());
        }
        transport.close();
        emptyReplicaNudger.close();
        control.close();
        partitions.values().forEach(Partition::close);
        closeQuietly(raftServer, config.nodeId());
        scheduler.shutdownNow();
        adminExecutor.shutdownNow();
        logRecoveries.shutdownNow();
        backups.close();
        sinkBackups.close();
        try
        {
            scheduler.awaitTermination(5, TimeUnit.SECONDS);
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
        }
        LOG.info("broker {} stopped", config.nodeId());
    }

    private static void closeQuietly(final RaftServer server, final int nodeId)
    {
        try
        {
            server.close();
        }
        catch (final IOException | RuntimeException e)
        {
            LOG.warn("broker {}: Raft server did not close cleanly", nodeId, e);
        }
    }

    /** A write of the group's Raft log that fails (a full disk) closes this replica and opens it again once there is room. */
    private static void recoverFailedLogs(
        final ReplicatedStateAdapter stateMachine,
        final String name,
        final GroupMember member,
        final Path raftDir,
        final DiskGuard diskGuard,
        final ExecutorService executor,
        final ScheduledExecutorService scheduler)
    {
        stateMachine.onLogFailure(new FailedLogRecovery(name, member, diskGuard::hasRoom,
            () -> RaftMetadataMend.mendGroup(raftDir, member.selfId(), member.group(), RaftSettings.maxLogEntry()),
            executor, scheduler));
    }

    private static ScheduledExecutorService newScheduler(final int nodeId, final int threads)
    {
        final ScheduledThreadPoolExecutor executor =
            new ScheduledThreadPoolExecutor(threads, daemonThreads("broker-" + nodeId + "-exporter-"));
        executor.setRemoveOnCancelPolicy(true);
        return Executors.unconfigurableScheduledExecutorService(executor);
    }

    /** Proposes admin changes (see {@link CommandApi}); as many threads as cores, at least two. */
    private static ExecutorService newAdminExecutor(final int nodeId)
    {
        return Executors.newFixedThreadPool(
            Math.max(2, Runtime.getRuntime().availableProcessors()), daemonThreads("broker-" + nodeId + "-admin-"));
    }

    /** Daemon threads named {@code prefix} and a count: a broker's pools must not keep an embedding JVM alive. */
    private static ThreadFactory daemonThreads(final String prefix)
    {
        final AtomicInteger count = new AtomicInteger();
        return (runnable) ->
        {
            final Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
