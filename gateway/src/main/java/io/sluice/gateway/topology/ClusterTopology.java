package io.sluice.gateway.topology;

import io.sluice.gateway.broker.BrokerDisk;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;

import java.util.Optional;
import java.util.OptionalInt;

/**
 * The gateway's picture of the cluster: the static distribution (every pair, even of a broker that is
 * down) plus the live state last reported by each broker. Thread-safe; reads never block.
 */
public interface ClusterTopology
{
    PartitionDistribution distribution();

    /** Whether the broker answered its latest topology request; false until it first does. */
    boolean isReachable(int brokerId);

    /**
     * Whether the broker is known to be down: its latest topology request found no connection (refused or
     * reset), or the broker answered it is still starting (UNAVAILABLE: its Raft groups are recovering). A broker that is merely slow to answer (hung, paused, overloaded) is unreachable but not known
     * down, so requests to it are still sent and may time out rather than fail.
     */
    default boolean isKnownDown(final int brokerId)
    {
        return !isReachable(brokerId);
    }

    /** The latest state the replica's broker reported for it, or empty if its broker is unreachable. */
    Optional<PartitionStatus> status(PartitionReplica replica);

    /** The leader of the partition as last reported by a reachable replica with the highest term. */
    OptionalInt leaderOf(int partitionId);

    /**
     * The cluster control group's leader as most reachable brokers last reported it; empty when none is known (a
     * topology that does not follow the control group knows none).
     */
    default OptionalInt controlLeader()
    {
        return OptionalInt.empty();
    }

    /**
     * Whether the broker's replica of the control group caught up with the group, as it last reported; until then its
     * exporting states may lag what was answered. True for a topology that does not follow the control group.
     */
    default boolean isControlCaughtUp(final int brokerId)
    {
        return true;
    }

    /** The broker's disk as it last reported it; unknown for a topology that does not poll brokers. */
    default BrokerDisk disk(final int brokerId)
    {
        return BrokerDisk.UNKNOWN;
    }

    /** Pause leases that ran out and ended a hold, as the control group counts them; 0 when none is known. */
    default long leaseExpiries()
    {
        return 0;
    }
}
