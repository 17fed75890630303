package io.sluice.dist;

import io.sluice.broker.disk.DiskWatermark;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.exporter.spi.ExporterSettings;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/** The broker-side {@code sluice.*} settings: data directory, node id and exporters. */
@ConfigurationProperties(prefix = "sluice")
public class SluiceProperties
{
    public static final String DATA_DIR_SETTING = "sluice.data-dir";
    public static final String FILE_EXPORTER = "file";

    /** Broker data under {@code <data-dir>/broker-<id>/}, file exports under {@code <data-dir>/exports/}. */
    private Path dataDir = Path.of("sluice-data");

    private final BrokerSettings broker = new BrokerSettings();

    /**
     * {@code sluice.exporters.<id>.type} (or {@code .class-name} and {@code .jar} for a third-party exporter),
     * {@code .path} and any other key ({@code .producer.acks}, {@code .args.url}), passed to the exporter as is.
     */
    private final Map<String, Map<String, String>> exporters = new TreeMap<>();

    public Path getDataDir()
    {
        return dataDir;
    }

    public void setDataDir(final Path dataDir)
    {
        this.dataDir = dataDir;
    }

    public BrokerSettings getBroker()
    {
        return broker;
    }

    public Map<String, Map<String, String>> getExporters()
    {
        return exporters;
    }

    /**
     * The exporters to run: the configured ones, or exporter {@code file} of type {@code file} when none
     * is configured. A {@code file} exporter without a path writes to {@code <data-dir>/exports/<id>}.
     */
    public Map<String, ExporterConfig> exporterConfigs()
    {
        final Map<String, Map<String, String>> configured = new TreeMap<>(exporters);
        if (configured.isEmpty())
        {
            configured.put(FILE_EXPORTER, Map.of());
        }
        final Map<String, ExporterConfig> configs = new LinkedHashMap<>();
        for (final Map.Entry<String, Map<String, String>> entry : configured.entrySet())
        {
            final String id = entry.getKey();
            // type, class-name, jar ... in their contract spelling: environment variables give classname
            final Map<String, String> properties = new HashMap<>(ExporterConfig.withBrokerSpellings(id, entry.getValue()));
            String type = properties.remove("type");
            final String className = properties.get(ExporterConfig.CLASS_NAME);
            if (className != null)
            {
                // A third-party exporter: its class is its kind.
                if (type != null && !type.isBlank())
                {
                    throw new InvalidClusterConfigException("sluice.exporters." + id + ".type", "'" + type +
                        "' given with sluice.exporters." + id + ".class-name: set one of them (class-name and jar " +
                        "load a third-party exporter, type names a built-in one)");
                }
                type = className.trim();
            }
            else if (properties.containsKey(ExporterConfig.JAR))
            {
                throw new InvalidClusterConfigException("sluice.exporters." + id + ".class-name",
                    "required with sluice.exporters." + id + ".jar (the exporter class in that jar)");
            }
            if (type == null || type.isBlank())
            {
                if (!FILE_EXPORTER.equals(id))
                {
                    throw new InvalidClusterConfigException("sluice.exporters." + id + ".type",
                        "required (only exporter 'file' defaults to type 'file'; a third-party exporter sets " +
                            "class-name and jar instead)");
                }
                type = FILE_EXPORTER;
            }
            if (FILE_EXPORTER.equals(type) && properties.keySet().stream().noneMatch(name ->
                ExporterSettings.sameName(name, "path") && !properties.get(name).isBlank()))
            {
                properties.put("path", dataDir.resolve("exports").resolve(id).toString());
            }
            configs.put(id, new ExporterConfig(id, type, properties));
        }
        return configs;
    }

    /** Shortest and longest {@code sluice.broker.election-timeout} (its maximum is twice it). */
    static final java.time.Duration ELECTION_TIMEOUT_MIN = java.time.Duration.ofMillis(100);
    static final java.time.Duration ELECTION_TIMEOUT_MAX = java.time.Duration.ofMinutes(1);

    /**
     * {@code config} with {@code sluice.broker.snapshot-threshold} (Raft entries between snapshots, each of which seals
     * the record log's segment and compacts what every exporter acknowledged) and {@code sluice.broker.segment-size}
     * (the record log's segment size, e.g. {@code 64MB}; compaction deletes whole segments, so a small volume wants
     * small ones) where they are set, {@code sluice.broker.disk.*} (when the broker refuses appends for its disk), and
     * {@code sluice.broker.election-timeout} (the Raft election timeout's minimum, its maximum twice that; leaders
     * heartbeat every half of it).
     *
     * @throws InvalidClusterConfigException naming the setting when a value cannot work.
     */
    public io.sluice.broker.BrokerConfig withStorage(final io.sluice.broker.BrokerConfig config)
    {
        long threshold = config.snapshotThresholdEntries();
        long segmentBytes = config.segmentSizeBytes();
        if (broker.snapshotThreshold != null)
        {
            threshold = broker.snapshotThreshold;
            if (threshold < 1)
            {
                throw new InvalidClusterConfigException("sluice.broker.snapshot-threshold",
                    "'" + threshold + "' is not a positive number of Raft entries");
            }
        }
        if (broker.segmentSize != null)
        {
            try
            {
                segmentBytes = DataSize.parse(broker.segmentSize.trim()).toBytes();
            }
            catch (final IllegalArgumentException e)
            {
                segmentBytes = -1;
            }
            if (segmentBytes < 1024 || segmentBytes > Integer.MAX_VALUE)
            {
                throw new InvalidClusterConfigException("sluice.broker.segment-size", "'" + broker.segmentSize +
                    "' is not a size from 1KB to 2GB (e.g. 64MB)");
            }
        }
        return broker.withElectionTimeout(
            config.withSnapshots(threshold, segmentBytes).withDiskWatermark(broker.diskWatermark()));
    }

    public static class BrokerSettings
    {
        /** This broker's index in {@code sluice.cluster.brokers}; required in broker mode. */
        private Integer nodeId;
        /** Raft entries between automatic snapshots; unset: the broker's default. */
        private Long snapshotThreshold;
        /** The record log's segment size ({@code 64MB}); unset: the broker's default. */
        private String segmentSize;
        /**
         * The Raft election timeout's minimum (maximum: twice it) of every group; unset: the broker's default (1s). Leaders
         * heartbeat every follower of every group every half of it, so a longer one costs less CPU at rest and a crashed
         * leader's partitions wait longer for a new one; one that CPU starvation outlasts makes leaders change.
         */
        private java.time.Duration electionTimeout;

        public java.time.Duration getElectionTimeout()
        {
            return electionTimeout;
        }

        public void setElectionTimeout(final java.time.Duration electionTimeout)
        {
            this.electionTimeout = electionTimeout;
        }

        /** {@code config} with this election timeout, or as it is when unset. */
        io.sluice.broker.BrokerConfig withElectionTimeout(final io.sluice.broker.BrokerConfig config)
        {
            if (electionTimeout == null)
            {
                return config;
            }
            if (electionTimeout.compareTo(ELECTION_TIMEOUT_MIN) < 0 || electionTimeout.compareTo(ELECTION_TIMEOUT_MAX) > 0)
            {
                throw new InvalidClusterConfigException("sluice.broker.election-timeout", "'" + electionTimeout.toMillis() +
                    "ms' is not from " + ELECTION_TIMEOUT_MIN.toMillis() + "ms to " + ELECTION_TIMEOUT_MAX.toSeconds() +
                    "s (e.g. 1s; the maximum is twice it)");
            }
            return config.withElectionTimeout(electionTimeout, electionTimeout.multipliedBy(2));
        }

        public Long getSnapshotThreshold()
        {
            return snapshotThreshold;
        }

        public void setSnapshotThreshold(final Long snapshotThreshold)
        {
            this.snapshotThreshold = snapshotThreshold;
        }

        public String getSegmentSize()
        {
            return segmentSize;
        }

        public void setSegmentSize(final String segmentSize)
        {
            this.segmentSize = segmentSize;
        }

        private final DiskSettings disk = new DiskSettings();

        public DiskSettings getDisk()
        {
            return disk;
        }

        /** The disk watermark, refused out of range (one line naming the setting). */
        public DiskWatermark diskWatermark()
        {
            if (disk.freeSpaceReserve == null)
            {
                throw new InvalidClusterConfigException(DiskWatermark.FREE_SPACE_RESERVE_SETTING, "must be set");
            }
            return new DiskWatermark(disk.highWatermark, disk.freeSpaceReserve.toBytes());
        }

        public Integer getNodeId()
        {
            return nodeId;
        }

        public void setNodeId(final Integer nodeId)
        {
            this.nodeId = nodeId;
        }
    
        /** {@code sluice.broker.disk.*}: when the broker refuses appends for its disk. */
        public static class DiskSettings
        {
            private double highWatermark = DiskWatermark.DEFAULT_HIGH_WATERMARK;
            private DataSize freeSpaceReserve = DataSize.ofBytes(DiskWatermark.DEFAULT_FREE_SPACE_RESERVE_BYTES);

            public double getHighWatermark()
            {
                return highWatermark;
            }

            public void setHighWatermark(final double highWatermark)
            {
                this.highWatermark = highWatermark;
            }

            public DataSize getFreeSpaceReserve()
            {
                return freeSpaceReserve;
            }

            public void setFreeSpaceReserve(final DataSize freeSpaceReserve)
            {
                this.freeSpaceReserve = freeSpaceReserve;
            }
        }
    }

}
