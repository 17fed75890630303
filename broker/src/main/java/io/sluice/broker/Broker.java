package io.sluice.broker;

import io.sluice.broker.backfill.BackfillRunnerConfig;
import io.sluice.broker.command.CommandApi;
import io.sluice.broker.disk.DiskGuard;
import io.sluice.broker.control.BackfillClaims;
import io.sluice.broker.control.ControlGroup;
import io.sluice.broker.control.ExportingControl;
import io.sluice.broker.exporter.ExporterRegistry;
import io.sluice.broker.partition.EmptyReplicaNudger;
import io.sluice.broker.partition.Partition;
import io.sluice.broker.raft.RaftPeers;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.message.AppendLimits;
import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.tls.TlsModeProbe;
import io.sluice.protocol.tls.TlsFiles;
import io.sluice.protocol.transport.ConnectionLimits;
import io.sluice.protocol.transport.TransportConfig;
import io.sluice.protocol.transport.TransportException;
import io.sluice.protocol.transport.TransportServer;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
 */
public final class Broker implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Broker.class);
    /** How often a broker looks for leaderships to give back to their preferred brokers. */
    static final long AUTO_REBALANCE_INTERVAL_MS = 1_000;
    /** How long a preferred replica must stay in sync before its leadership goes back to it (see {@link PreferredLeaderWatch}). */
    static final java.time.Duration AUTO_REBALANCE_STABLE = java.time.Duration.ofSeconds(3);
    /** Bound on handing the control group's leadership over when the broker stops (a transfer takes well under 1 s). */
    static final Duration CONTROL_HANDOVER_BOUND = Duration.ofSeconds(3);
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
    private final RaftServer raftServer;
    private final TransportServer transport;
    private final EmptyReplicaNudger emptyReplicaNudger;
    private final LeaderBalancer balancer;
    private final DiskGuard diskGuard;
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
        final RaftServer raftServer,
        final TransportServer transport,
        final EmptyReplicaNudger emptyReplicaNudger,
        final ClusterTls tls,
        final DiskGuard diskGuard)
    {
        this.diskGuard = diskGuard;
        this.balancer = new LeaderBalancer(config.nodeId(), config.distribution(), partitions, AUTO_REBALANCE_STABLE,
            System::nanoTime);
        this.config = config;
        this.tls = tls;
        this.partitions = partitions;
        this.control = control;
        this.exportingControl = exportingControl;
        this.backfillClaims = backfillClaims;
        this.scheduler = scheduler;
        this.adminExecutor = adminExecutor;
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
        final PartitionDistribution distribution = config.distribution();
        final int nodeId = config.nodeId();
        distribution.checkNodeId(nodeId);
        if (tls != null && config.raftTransport() != BrokerConfig.RaftTransport.GRPC)
        {
            throw new InvalidClusterConfigException(TlsFiles.ENABLED_SETTING, "needs the gRPC Raft transport (the " +
                config.raftTransport() + " transport of Ratis has no TLS)");
        }
        final ExporterRegistry registry = ExporterRegistry.builtIn();
        registry.validate(nodeId, config.dataDir(), config.exporters());
        final InetSocketAddress commandAddress = resolve(distribution.commandAddress(nodeId));
        final InetSocketAddress raftAddress = resolve(distribution.raftAddress(nodeId));
        checkPortFree(nodeId, commandAddress);
        checkPortFree(nodeId, raftAddress);
        // Before anything starts: a peer on the other side of sluice.cluster.tls.enabled stops this start.
        TlsModeProbe.check(tls != null, "broker " + nodeId, peersOf(distribution, nodeId), TlsModeProbe.DEFAULT_BUDGET);

        DataLayout.check(config.brokerDir());
        final DiskGuard diskGuard = DiskGuard.start(nodeId, config.brokerDir(), config.diskWatermark());
        final ScheduledExecutorService scheduler = newScheduler(nodeId, config.exporterThreads());
        final ExecutorService adminExecutor = newAdminExecutor(nodeId);
        final RaftProperties clientProperties = clientProperties(config);
        final Parameters clientParameters = raftTlsParameters(tls, false);
        final Map<Integer, Partition> partitions = new LinkedHashMap<>();
        final Map<RaftGroupId, Partition> byGroup = new LinkedHashMap<>();
        final ControlGroup control = new ControlGroup(nodeId, distribution, config.controlVotersInCluster(),
            new ControlListener(partitions), scheduler, clientProperties, clientParameters);
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

        RaftServer raftServer = null;
        TransportServer transport = null;
        try
        {
            raftServer = RaftServer.newBuilder()
                .setServerId(RaftPeers.peerId(nodeId))
                .setProperties(serverProperties(config, raftAddress))
                .setParameters(raftTlsParameters(tls, true))
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
            try
            {
                raftServer.start();
            }
            catch (final IOException e)
            {
                if (isBindFailure(e))
                {
                    throw portInUse(nodeId, raftAddress, e);
                }
                throw e;
            }
            addGroups(raftServer, nodeId, control, partitions);
            control.start();
            final ExportingControl exportingControl =
                new ExportingControl(nodeId, control, partitions, config.adminTimeout());
            final BackfillClaims backfillClaims = new BackfillClaims(nodeId, control, config.exporters().keySet(),
                config.adminTimeout(), Clock.systemUTC());

            try
            {
                transport = TransportServer.start(commandAddress,
                    new CommandApi(nodeId, distribution, partitions, control, exportingControl, backfillClaims,
                        adminExecutor, diskGuard),
                    TransportConfig.defaults(), ConnectionLimits.defaults(), tls);
            }
            catch (final TransportException e)
            {
                throw portInUse(nodeId, commandAddress, e);
            }
            final Broker broker = new Broker(config, partitions, control, exportingControl, backfillClaims, scheduler,
                adminExecutor,
                raftServer, transport,
                new EmptyReplicaNudger(nodeId, partitions.values(), clientProperties, clientParameters), tls, diskGuard);
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
            LOG.info("broker {} started: command API on {}, Raft on {} ({}{}), partitions {}, control group {}, data in {}",
                nodeId, transport.localAddress(), raftAddress, config.raftTransport(), tls == null ? "" : ", mutual TLS",
                partitions.keySet(), nodeId < config.controlVotersInCluster() ? "voter" : "listener", config.brokerDir());
            return broker;
        }
        catch (final IOException | RuntimeException e)
        {
            control.close();
            partitions.values().forEach(Partition::close);
            if (transport != null)
            {
                transport.close();
            }
            if (raftServer != null)
            {
                closeQuietly(raftServer, nodeId);
            }
            scheduler.shutdownNow();
            adminExecutor.shutdownNow();
            throw e;
        }
    }

    /** The command ports of the other brokers, for the TLS mode probe. */
    private static List<TlsModeProbe.Peer> peersOf(final PartitionDistribution distribution, final int nodeId)
    {
        final List<TlsModeProbe.Peer> peers = new ArrayList<>();
        for (int brokerId = 0; brokerId < distribution.brokerCount(); brokerId++)
        {
            final InetSocketAddress address = distribution.commandAddress(brokerId);
            if (brokerId != nodeId && address.getPort() != 0)
            {
                peers.add(new TlsModeProbe.Peer(address, "broker " + brokerId + " at " + address.getHostString() + ":" +
                    address.getPort()));
            }
        }
        return peers;
    }

    /** Adds the groups a fresh data directory does not hold yet (on restart Ratis recovers every group by itself). */
    private static void addGroups(
        final RaftServer server, final int nodeId, final ControlGroup control, final Map<Integer, Partition> partitions)
        throws IOException
    {
        final List<RaftGroupId> existing = new ArrayList<>();
        server.getGroupIds().forEach(existing::add);
        final ClientId clientId = ClientId.randomId();
        final AtomicLong callId = new AtomicLong();
        final Map<RaftGroup, String> groups = new LinkedHashMap<>();
        groups.put(control.raftGroup(), "the control group");
        partitions.values().forEach((partition) -> groups.put(partition.group(), "partition " + partition.partitionId()));
        for (final Map.Entry<RaftGroup, String> group : groups.entrySet())
        {
            if (existing.contains(group.getKey().getGroupId()))
            {
                continue;
            }
            final RaftClientReply reply = server.groupManagement(GroupManagementRequest.newAdd(
                clientId, server.getId(), callId.incrementAndGet(), group.getKey()));
            if (!reply.isSuccess())
            {
                throw new IOException("broker " + nodeId + ": cannot add the Raft group of " + group.getValue() + ": " +
                    reply.getException());
            }
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
            adminExecutor, diskGuard);
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

    /**
     * The Ratis server settings a broker runs with (public so benchmarks can run a bare Ratis state machine
     * under exactly the same settings).
     */
    public static RaftProperties serverProperties(final BrokerConfig config, final InetSocketAddress raftAddress)
    {
        final RaftProperties properties = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(properties, List.of(config.brokerDir().resolve("raft").toFile()));
        if (config.raftTransport() == BrokerConfig.RaftTransport.NETTY)
        {
            RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.NETTY);
            NettyConfigKeys.Server.setHost(properties, raftAddress.getHostString());
            NettyConfigKeys.Server.setPort(properties, raftAddress.getPort());
        }
        else
        {
            RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.GRPC);
            GrpcConfigKeys.Server.setHost(properties, raftAddress.getHostString());
            GrpcConfigKeys.Server.setPort(properties, raftAddress.getPort());
            GrpcConfigKeys.Server.setAsyncRequestThreadPoolCached(properties, false);
            GrpcConfigKeys.Server.setAsyncRequestThreadPoolSize(properties, 4);
        }
        // Elections: 1-2 s keeps leaders stable when the CPU is saturated. A leader heartbeats every follower of every
        // group at half the minimum (500 ms): a sixth of what Ratis's default 150 ms costs an idle cluster (bash
        // qa/bench.sh idle measures both). Ratis's separate heartbeat stream stays on: without it a heartbeat
        // queues behind a large append on a loaded machine, and it saved no CPU beyond the noise there.
        RaftServerConfigKeys.Rpc.setTimeoutMin(properties, duration(config.electionTimeoutMin()));
        RaftServerConfigKeys.Rpc.setTimeoutMax(properties, duration(config.electionTimeoutMax()));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(properties, duration(config.electionTimeoutMin()));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(properties, duration(config.electionTimeoutMax()));
        RaftServerConfigKeys.Rpc.setRequestTimeout(properties, TimeDuration.valueOf(3, TimeUnit.SECONDS));
        // Ratis waits 10 ms by default before sending new entries, and a follower learns the commit index only
        // with the next send: every admin change paid it twice. Writes batch above Raft (AppendBatcher), so they
        // do not need the wait to batch.
        RaftServerConfigKeys.Log.Appender.setWaitTimeMin(properties, TimeDuration.valueOf(1, TimeUnit.MILLISECONDS));
        // Fast appender retries: a restarted follower catches up in a fraction of a second.
        RaftServerConfigKeys.Log.Appender.setRetryPolicy(properties, "1ms,10,100ms,100000");
        // Direct memory per group: the appender's byte limit is also the largest entry Raft can send, so it holds the
        // largest entry a partition proposes (AppendLimits: one client batch of keys, payloads and headers); the
        // write buffer holds one entry with its length and checksum. Smaller, a 1 MiB record never replicates
        // and its leader is voted out over and over.
        // Raft log segments follow the record log's (only closed segments are purged), within 256 KiB..32 MiB.
        final long raftSegmentBytes = Math.max(256 * 1024, Math.min(32L * 1024 * 1024, config.segmentSizeBytes()));
        final long writeBufferBytes = AppendLimits.MAX_ENTRY_BYTES + 64 * 1024;
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(properties, SizeInBytes.valueOf(AppendLimits.MAX_ENTRY_BYTES));
        RaftServerConfigKeys.Log.setWriteBufferSize(properties, SizeInBytes.valueOf(writeBufferBytes));
        RaftServerConfigKeys.Log.setSegmentSizeMax(properties, SizeInBytes.valueOf(raftSegmentBytes));
        RaftServerConfigKeys.Log.setPreallocatedSize(properties, SizeInBytes.valueOf(Math.min(1024 * 1024, raftSegmentBytes)));
        RaftServerConfigKeys.Log.setSegmentCacheNumMax(properties, 2);
        RaftServerConfigKeys.Log.Appender.setSnapshotChunkSizeMax(properties, SizeInBytes.valueOf("1MB"));
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(properties, true);
        // Snapshots seal and compact the record log; Raft then purges its own log up to them.
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(properties, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(properties, config.snapshotThresholdEntries());
        RaftServerConfigKeys.Snapshot.setCreationGap(properties, Math.min(1024, config.snapshotThresholdEntries()));
        RaftServerConfigKeys.Log.setPurgeGap(properties, (int)Math.min(1024, config.snapshotThresholdEntries()));
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(properties, true);
        return properties;
    }

    /**
     * Ratis's gRPC TLS settings from the cluster's reloading key and trust managers (so replaced files are used by
     * new connections), with client certificates required; empty parameters when TLS is off. A server's own
     * client and admin channels present the same certificate.
     */
    public static Parameters raftTlsParameters(final ClusterTls tls, final boolean server)
    {
        final Parameters parameters = new Parameters();
        if (tls == null)
        {
            return parameters;
        }
        final GrpcTlsConfig conf = new GrpcTlsConfig(tls.keyManager(), tls.trustManager(), true);
        GrpcConfigKeys.TLS.setConf(parameters, conf);
        GrpcConfigKeys.Client.setTlsConf(parameters, conf);
        GrpcConfigKeys.Admin.setTlsConf(parameters, conf);
        if (server)
        {
            GrpcConfigKeys.Server.setTlsConf(parameters, conf);
        }
        return parameters;
    }

    private static RaftProperties clientProperties(final BrokerConfig config)
    {
        final RaftProperties properties = new RaftProperties();
        RaftConfigKeys.Rpc.setType(properties, config.raftTransport() == BrokerConfig.RaftTransport.NETTY ?
            SupportedRpcType.NETTY : SupportedRpcType.GRPC);
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties, TimeDuration.valueOf(3, TimeUnit.SECONDS));
        return properties;
    }

    private static TimeDuration duration(final java.time.Duration duration)
    {
        return TimeDuration.valueOf(duration.toMillis(), TimeUnit.MILLISECONDS);
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

    private static InetSocketAddress resolve(final InetSocketAddress address)
    {
        return address.isUnresolved() ? new InetSocketAddress(address.getHostString(), address.getPort()) : address;
    }

    private static void checkPortFree(final int nodeId, final InetSocketAddress address)
    {
        try (ServerSocket socket = new ServerSocket())
        {
            socket.setReuseAddress(true);
            socket.bind(address);
        }
        catch (final IOException e)
        {
            throw portInUse(nodeId, address, e);
        }
    }

    private static boolean isBindFailure(final Throwable failure)
    {
        for (Throwable t = failure; t != null; t = t.getCause())
        {
            if (t instanceof java.net.BindException)
            {
                return true;
            }
        }
        return false;
    }

    private static InvalidClusterConfigException portInUse(
        final int nodeId, final InetSocketAddress address, final Exception cause)
    {
        final InvalidClusterConfigException failure = new InvalidClusterConfigException(
            PartitionDistribution.BROKERS_SETTING, "port " + address.getPort() + " of broker " + nodeId +
            " is in use (" + address.getHostString() + ": " + cause.getMessage() + ")");
        failure.initCause(cause);
        return failure;
    }
}
