package io.sluice.broker;

import io.sluice.broker.disk.DiskWatermark;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.cluster.PartitionDistribution;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * Everything a broker needs to start: its node id, the cluster's static distribution, the data directory
 * root ({@code sluice.data-dir}; this broker's data goes to {@code <dataDir>/broker-<id>/}), its exporters,
 * and tuning with defaults that suit a small machine.
 *
 * @param raftTransport             Ratis RPC: {@code GRPC} (default) or {@code NETTY}. Netty wrote about twice the
 *                                  records/s of gRPC, with a follower halted too (bash qa/bench.sh writes), but it
 *                                  has no TLS, and ratis-netty 3.2.1 (3.2.2 is not available to this build) lacks
 *                                  3.2.2's fixes to failed sends and replies (RATIS-2415, -2416), the paths a broker
 *                                  going away takes.
 * @param electionTimeoutMin        lower bound of the Raft election timeout; 1-2 s keeps leaders stable on
 *                                  a saturated 2-core machine.
 * @param snapshotThresholdEntries  Raft entries between automatic snapshots (which seal and compact the
 *                                  record log and let Raft purge its log).
 * @param segmentSizeBytes          size at which the record log (and, within 256 KiB..32 MiB, the Raft log) starts a new segment.
 * @param exporterAckInterval       how often acknowledged exporter positions are replicated (one entry).
 * @param adminTimeout              bound on committing an exporting state change before answering TIMEOUT.
 * @param exporterThreads           threads running this broker's exporter directors.
 * @param autoRebalance             whether leaderships go back to their preferred brokers by themselves
 *                                  ({@code sluice.cluster.auto-rebalance}).
 * @param shutdownTimeout           bound on handing this broker's leaderships over when it stops (controlled shutdown).
 * @param controlVoters             how many brokers vote in the cluster control group ({@code sluice.cluster.control-voters},
 *                                  brokers 0 to N-1; at most the cluster size); the others follow it as listeners.
 * @param diskWatermark             when this broker refuses appends for its disk ({@code sluice.broker.disk.*}).
 */
public record BrokerConfig(
    int nodeId,
    PartitionDistribution distribution,
    Path dataDir,
    Map<String, ExporterConfig> exporters,
    RaftTransport raftTransport,
    Duration electionTimeoutMin,
    Duration electionTimeoutMax,
    long snapshotThresholdEntries,
    long segmentSizeBytes,
    Duration exporterAckInterval,
    Duration adminTimeout,
    int exporterThreads,
    boolean autoRebalance,
    Duration shutdownTimeout,
    int controlVoters,
    DiskWatermark diskWatermark)
{
    public enum RaftTransport
    {
        GRPC,
        NETTY
    }

    /**
     * Controlled shutdown bound: a transfer takes well under a second, and a broker that cannot hand a leadership
     * over (no follower in sync) gives that partition up at once, so this only caps slow catch-ups.
     */
    public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);
    /** Voters of the control group: three survive one broker down, and a pause commits in one round among them. */
    public static final int DEFAULT_CONTROL_VOTERS = 3;
    public static final long DEFAULT_SNAPSHOT_THRESHOLD_ENTRIES = 20_000;
    public static final String CONTROL_VOTERS_SETTING = "sluice.cluster.control-voters";

    public BrokerConfig
    {
        Objects.requireNonNull(distribution, "distribution");
        Objects.requireNonNull(dataDir, "dataDir");
        exporters = exporters == null ? Map.of() : Map.copyOf(exporters);
        Objects.requireNonNull(raftTransport, "raftTransport");
        Objects.requireNonNull(diskWatermark, "diskWatermark");
        if (electionTimeoutMax.compareTo(electionTimeoutMin) <= 0)
        {
            throw new IllegalArgumentException("electionTimeoutMax " + electionTimeoutMax +
                " must exceed electionTimeoutMin " + electionTimeoutMin);
        }
        if (shutdownTimeout == null || shutdownTimeout.isNegative())
        {
            throw new IllegalArgumentException("shutdownTimeout must not be negative, was " + shutdownTimeout);
        }
        if (controlVoters < 1)
        {
            throw new InvalidClusterConfigException(CONTROL_VOTERS_SETTING,
                "must be at least 1, was " + controlVoters);
        }
        if (snapshotThresholdEntries < 1 || segmentSizeBytes < 1024 || exporterThreads < 1)
        {
            throw new IllegalArgumentException("snapshotThresholdEntries, segmentSizeBytes (>= 1 KiB) and " +
                "exporterThreads must be positive");
        }
    }

    public static BrokerConfig of(
        final int nodeId,
        final PartitionDistribution distribution,
        final Path dataDir,
        final Map<String, ExporterConfig> exporters)
    {
        return new BrokerConfig(nodeId, distribution, dataDir, exporters, RaftTransport.GRPC,
            Duration.ofMillis(1000), Duration.ofMillis(2000), DEFAULT_SNAPSHOT_THRESHOLD_ENTRIES, 64L * 1024 * 1024,
            Duration.ofMillis(100), Duration.ofSeconds(10), 1, true, DEFAULT_SHUTDOWN_TIMEOUT, DEFAULT_CONTROL_VOTERS,
            DiskWatermark.DEFAULT);
    }

    /** This broker's own data: {@code <dataDir>/broker-<nodeId>}. */
    public Path brokerDir()
    {
        return dataDir.resolve("broker-" + nodeId);
    }

    public BrokerConfig withRaftTransport(final RaftTransport transport)
    {
        return new BrokerConfig(nodeId, distribution, dataDir, exporters, transport, electionTimeoutMin,
            electionTimeoutMax, snapshotThresholdEntries, segmentSizeBytes, exporterAckInterval, adminTimeout,
            exporterThreads, autoRebalance, shutdownTimeout, controlVoters, diskWatermark);
    }

    public BrokerConfig withElectionTimeout(final Duration min, final Duration max)
    {
        return new BrokerConfig(nodeId, distribution, dataDir, exporters, raftTransport, min, max,
            snapshotThresholdEntries, segmentSizeBytes, exporterAckInterval, adminTimeout, exporterThreads,
            autoRebalance, shutdownTimeout, controlVoters, diskWatermark);
    }

    public BrokerConfig withSnapshots(final long thresholdEntries, final long segmentBytes)
    {
        return new BrokerConfig(nodeId, distribution, dataDir, exporters, raftTransport, electionTimeoutMin,
            electionTimeoutMax, thresholdEntries, segmentBytes, exporterAckInterval, adminTimeout, exporterThreads,
            autoRebalance, shutdownTimeout, controlVoters, diskWatermark);
    }

    public BrokerConfig withExporters(final Map<String, ExporterConfig> configured)
    {
        return new BrokerConfig(nodeId, distribution, dataDir, configured, raftTransport, electionTimeoutMin,
            electionTimeoutMax, snapshotThresholdEntries, segmentSizeBytes, exporterAckInterval, adminTimeout,
            exporterThreads, autoRebalance, shutdownTimeout, controlVoters, diskWatermark);
    }

    public BrokerConfig withAdminTimeout(final Duration timeout)
    {
        return new BrokerConfig(nodeId, distribution, dataDir, exporters, raftTransport, electionTimeoutMin,
            electionTimeoutMax, snapshotThresholdEntries, segmentSizeBytes, exporterAckInterval, timeout,
            exporterThreads, autoRebalance, shutdownTimeout, controlVoters, diskWatermark);
    }

    public BrokerConfig withAutoRebalance(final boolean enabled)
    {
        return new BrokerConfig(nodeId, distribution, dataDir, exporters, raftTransport, electionTimeoutMin,
            electionTimeoutMax, snapshotThresholdEntries, segmentSizeBytes, exporterAckInterval, adminTimeout,
            exporterThreads, enabled, shutdownTimeout, controlVoters, diskWatermark);
    }

    public BrokerConfig withShutdownTimeout(final Duration timeout)
    {
        return new BrokerConfig(nodeId, distribution, dataDir, exporters, raftTransport, electionTimeoutMin,
            electionTimeoutMax, snapshotThresholdEntries, segmentSizeBytes, exporterAckInterval, adminTimeout,
            exporterThreads, autoRebalance, timeout, controlVoters, diskWatermark);
    }

    public BrokerConfig withControlVoters(final int voters)
    {
        return new BrokerConfig(nodeId, distribution, dataDir, exporters, raftTransport, electionTimeoutMin,
            electionTimeoutMax, snapshotThresholdEntries, segmentSizeBytes, exporterAckInterval, adminTimeout,
            exporterThreads, autoRebalance, shutdownTimeout, voters, diskWatermark);
    }

    public BrokerConfig withDiskWatermark(final DiskWatermark watermark)
    {
        return new BrokerConfig(nodeId, distribution, dataDir, exporters, raftTransport, electionTimeoutMin,
            electionTimeoutMax, snapshotThresholdEntries, segmentSizeBytes, exporterAckInterval, adminTimeout,
            exporterThreads, autoRebalance, shutdownTimeout, controlVoters, watermark);
    }

    /** The brokers that vote in the control group: {@link #controlVoters()}, at most the cluster size. */
    public int controlVotersInCluster()
    {
        return Math.min(controlVoters, distribution.brokerCount());
    }
}
