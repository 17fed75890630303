package io.sluice.gateway.config;

import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.tls.TlsFiles;
import org.springframework.boot.context.properties.ConfigurationProperties;

import java.nio.file.Path;

/** The {@code sluice.cluster.*} settings shared by brokers and gateways, with the contract's defaults. */
@ConfigurationProperties(prefix = "sluice.cluster")
public class ClusterProperties
{
    public static final String DEFAULT_BROKERS = "127.0.0.1:26501,127.0.0.1:26511,127.0.0.1:26521";

    /** Command-API address of broker 0..N-1; the list's length is the cluster size. */
    private String brokers = DEFAULT_BROKERS;

    /** Partition count; ids are 1..P. */
    private int partitions = 6;

    /** Replicas per partition, placed round-robin. */
    private int replicationFactor = 3;

    /**
     * Whether each partition's leadership goes back to its preferred broker (the first of its placement) by itself
     * once that replica is in sync; off, only {@code POST /actuator/rebalance} moves it back.
     */
    private boolean autoRebalance = true;

    /**
     * Brokers that vote in the cluster control group (brokers 0 to N-1, at most the cluster size); the others follow
     * it as non-voting listeners. Every broker of a cluster must be given the same value.
     */
    private int controlVoters = 3;

    public int getControlVoters()
    {
        return controlVoters;
    }

    public void setControlVoters(final int controlVoters)
    {
        this.controlVoters = controlVoters;
    }

    public boolean isAutoRebalance()
    {
        return autoRebalance;
    }

    public void setAutoRebalance(final boolean autoRebalance)
    {
        this.autoRebalance = autoRebalance;
    }
    /** {@code sluice.cluster.tls.*}: mutual TLS between gateway and brokers and between brokers. */
    private final Tls tls = new Tls();

    public String getBrokers()
    {
        return brokers;
    }

    public void setBrokers(final String brokers)
    {
        this.brokers = brokers;
    }

    public int getPartitions()
    {
        return partitions;
    }

    public void setPartitions(final int partitions)
    {
        this.partitions = partitions;
    }

    public int getReplicationFactor()
    {
        return replicationFactor;
    }

    public void setReplicationFactor(final int replicationFactor)
    {
        this.replicationFactor = replicationFactor;
    }

    public Tls getTls()
    {
        return tls;
    }

    /**
     * The cluster TLS material when {@code sluice.cluster.tls.enabled=true}, read and checked now; null when off.
     *
     * @throws io.sluice.protocol.cluster.InvalidClusterConfigException naming the setting of a missing or bad file.
     */
    public ClusterTls loadTls()
    {
        return tls.isEnabled() ?
            ClusterTls.load(new TlsFiles(tls.getCertificate(), tls.getPrivateKey(), tls.getTrustedCertificates())) : null;
    }

    /** Validates and builds the static placement; throws InvalidClusterConfigException naming the setting. */
    public PartitionDistribution toDistribution()
    {
        return PartitionDistribution.of(brokers, partitions, replicationFactor);
    }

    public static class Tls
    {
        /** Mutual TLS on every broker command port and Raft port, and from the gateway to the brokers. */
        private boolean enabled;

        /** PEM certificate chain of this process. */
        private Path certificate;

        /** PEM private key (PKCS#8) of that certificate. */
        private Path privateKey;

        /** PEM bundle of the CAs whose certificates a peer must present. */
        private Path trustedCertificates;

        public boolean isEnabled()
        {
            return enabled;
        }

        public void setEnabled(final boolean enabled)
        {
            this.enabled = enabled;
        }

        public Path getCertificate()
        {
            return certificate;
        }

        public void setCertificate(final Path certificate)
        {
            this.certificate = certificate;
        }

        public Path getPrivateKey()
        {
            return privateKey;
        }

        public void setPrivateKey(final Path privateKey)
        {
            this.privateKey = privateKey;
        }

        public Path getTrustedCertificates()
        {
            return trustedCertificates;
        }

        public void setTrustedCertificates(final Path trustedCertificates)
        {
            this.trustedCertificates = trustedCertificates;
        }
    }
}
