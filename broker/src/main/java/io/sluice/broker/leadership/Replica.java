package io.sluice.broker.leadership;

import io.sluice.broker.errors.PartitionException;
import io.sluice.broker.raft.GroupMember;

/**
 * What a leadership transfer, the follower checks and the proposals' hold need of the partition replica they serve:
 * its Raft member, its place, its proposals, and its exporters to stop before the leadership moves and to start again
 * when it stays. The replica ({@code partition/Partition}) implements it.
 */
public interface Replica
{
    int brokerId();

    int partitionId();

    /** The broker that should lead the partition when it can: the first of its placement. */
    int preferredBrokerId();

    GroupMember member();

    LocalWrites writes();

    /** Whether the broker stops: the exporters stay stopped and nothing takes the leadership back here. */
    boolean isStopping();

    /** NOT_LEADER (with the known leader) when this replica does not lead the partition now, else null. */
    PartitionException notLeaderError();

    /** Stops this replica's exporters and backfills before its leadership moves (waits for an export in flight). */
    void stopExporting();

    /** Starts them again, as a leader that just became ready: a transfer failed and this replica still leads. */
    void resumeExporting();
}
