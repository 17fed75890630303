package io.sluice.gateway.management;

import java.util.List;

/**
 * What {@code /actuator/partitions} and {@code /actuator/topology} answer: every broker and every pair, and the leader
 * of the cluster control group (which holds the exporting state), -1 when no reachable broker knows one.
 */
public record ClusterView(
    int clusterSize, int partitionCount, int replicationFactor, int controlLeaderId, List<Broker> brokers,
    List<Partition> partitions)
{
    /**
     * {@code reason} says why an unreachable broker is so, or is null. {@code leaderOf} lists the partitions this
     * broker leads, {@code preferredLeaderOf} those it should lead (it is first in their placement): equal when the
     * leaderships are balanced. {@code controlCaughtUp}: the broker's control group replica caught up with the group
     * (until then it exports nothing).
     */
    public record Broker(
        int brokerId, String address, boolean reachable, String reason, List<Integer> leaderOf,
        List<Integer> preferredLeaderOf, boolean controlCaughtUp)
    {
    }

    /**
     * {@code leaderId} is -1 when no reachable replica reports being leader; {@code preferredLeaderId} is the first
     * broker of the placement, where {@code POST /actuator/rebalance} moves the leadership.
     */
    public record Partition(int partitionId, int leaderId, int preferredLeaderId, String health, List<Replica> replicas)
    {
    }

    /** Role is UNKNOWN, term and positions -1, when the broker is unreachable. */
    public record Replica(
        int brokerId, String role, long term, boolean reachable, int leaderId, long lastPosition, long exportedPosition)
    {
    }
}
