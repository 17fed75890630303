package io.sluice.gateway.broker;

import io.sluice.protocol.cluster.PartitionStatus;

import java.util.List;

/**
 * One broker's answer to a topology request: its view of each partition it hosts, and of the cluster control group.
 *
 * @param controlLeaderId the control group's leader as the broker knows it, -1 when it knows none.
 * @param controlCaughtUp whether the broker's control group replica caught up with the group (until then its
 *                        exporting states may be older than what was answered, and it exports nothing).
 * @param disk            the broker's data directory's volume, and the appends it refused for it.
 * @param leaseExpiries   pause leases that ran out and ended a hold, as the broker's control replica counted them.
 */
public record BrokerTopology(
    int brokerId, List<PartitionStatus> partitions, int controlLeaderId, boolean controlCaughtUp, BrokerDisk disk,
    long leaseExpiries)
{
    public BrokerTopology(
        final int brokerId, final List<PartitionStatus> partitions, final int controlLeaderId, final boolean controlCaughtUp)
    {
        this(brokerId, partitions, controlLeaderId, controlCaughtUp, BrokerDisk.UNKNOWN, 0);
    }

    /** A broker's view without news of the control group (tests, older brokers). */
    public BrokerTopology(final int brokerId, final List<PartitionStatus> partitions)
    {
        this(brokerId, partitions, -1, true);
    }
}
