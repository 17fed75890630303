package io.sluice.broker.errors;

import io.sluice.broker.errors.PartitionException;
import io.sluice.broker.raft.GroupMember;
import io.sluice.protocol.codecs.ErrorCode;

/**
 * The failures of one partition replica, worded the same everywhere ("partition 3 on broker 1: not leader (leader is
 * 2)"), and how its Raft group's refusals read ({@link GroupMember.Refusals}).
 */
public record PartitionErrors(int partitionId, int brokerId) implements GroupMember.Refusals
{
    public String replica()
    {
        return "partition " + partitionId + " on broker " + brokerId;
    }

    public PartitionException notLeader(final int leaderId)
    {
        return new PartitionException(ErrorCode.NOT_LEADER, partitionId, leaderId, replica() + ": not leader (leader is " +
            (leaderId < 0 ? "unknown" : String.valueOf(leaderId)) + ")");
    }

    @Override
    public PartitionException notLeader(final int leaderId, final Throwable cause)
    {
        return notLeader(leaderId);
    }

    @Override
    public PartitionException leaderNotReady(final Throwable cause)
    {
        return new PartitionException(ErrorCode.NOT_LEADER, partitionId, brokerId,
            replica() + ": leader not ready yet (leader is " + brokerId + ")");
    }

    @Override
    public PartitionException refused(final Throwable cause)
    {
        return unavailable(String.valueOf(cause));
    }

    @Override
    public PartitionException unavailable(final String why)
    {
        return new PartitionException(ErrorCode.UNAVAILABLE, partitionId, -1, replica() + ": unavailable: " + why);
    }
}
