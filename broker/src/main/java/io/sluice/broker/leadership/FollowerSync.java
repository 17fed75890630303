package io.sluice.broker.leadership;

import io.sluice.broker.raft.RaftPeers;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How in sync a partition leader's followers are, as the leader sees them: whom a leadership can be handed to.
 * Read by the leader balance, the controlled shutdown and the retries of a requested rebalance. Thread-safe (it only
 * reads the Ratis division's state).
 */
public final class FollowerSync
{
    /**
     * A follower counts as in sync when the leader heard from it this recently (or within the group's minimum election
     * timeout, when that is longer: {@link #maxRpcAgeMs}) and its commit index is at most
     * {@link #IN_SYNC_MAX_LAG_ENTRIES} behind the leader's: Ratis blocks writes while a transfer waits for the
     * transferee to catch up, so only a replica that is nearly there is worth handing the leadership to.
     */
    static final long IN_SYNC_MAX_RPC_AGE_MS = 1_000;
    static final long IN_SYNC_MAX_LAG_ENTRIES = 64;

    private final Replica partition;
    private final int brokerId;
    private final int partitionId;

    public FollowerSync(final Replica partition)
    {
        this.partition = partition;
        this.brokerId = partition.brokerId();
        this.partitionId = partition.partitionId();
    }

    /**
     * Why the replica on {@code otherBrokerId} is not in sync as this leader sees it, or null when it is: the
     * leader heard from it within {@link #maxRpcAgeMs} and its commit index is at most
     * {@value #IN_SYNC_MAX_LAG_ENTRIES} entries behind the leader's.
     */
    public String outOfSyncReason(final int otherBrokerId)
    {
        return outOfSyncReason(otherBrokerId, IN_SYNC_MAX_LAG_ENTRIES);
    }

    /** As {@link #outOfSyncReason(int)}, with at most {@code maxLagEntries} of commit index behind the leader. */
    public String outOfSyncReason(final int otherBrokerId, final long maxLagEntries)
    {
        final RaftServer.Division division = partition.member().openDivision();
        if (division == null)
        {
            return "partition " + partitionId + " on broker " + brokerId + " is not started";
        }
        final DivisionInfo info = division.getInfo();
        if (!info.isLeader())
        {
            return "broker " + brokerId + " does not lead partition " + partitionId;
        }
        final String peer = RaftPeers.peerId(otherBrokerId).toString();
        final long rpcAgeMs = lastRpcAgeMs(info, peer);
        if (rpcAgeMs < 0)
        {
            return "broker " + otherBrokerId + " is not a follower of partition " + partitionId;
        }
        if (rpcAgeMs > maxRpcAgeMs(division))
        {
            return "broker " + otherBrokerId + " has not answered the leader of partition " + partitionId + " for " +
                rpcAgeMs + " ms";
        }
        final Map<String, Long> commitIndices = new HashMap<>();
        for (final CommitInfoProto commit : division.getCommitInfos())
        {
            commitIndices.put(commit.getServer().getId().toStringUtf8(), commit.getCommitIndex());
        }
        final long leaderCommit = division.getRaftLog().getLastCommittedIndex();
        final long followerCommit = commitIndices.getOrDefault(peer, -1L);
        if (followerCommit + maxLagEntries < leaderCommit)
        {
            return "broker " + otherBrokerId + " is catching up on partition " + partitionId + " (commit index " +
                followerCommit + " of " + leaderCommit + ")";
        }
        return null;
    }

    /**
     * Milliseconds since this replica last heard from {@code otherBrokerId} in this group: as its leader, from that
     * follower (-1 when the leader has no follower entry for it: Ratis replicates nothing to it); as a follower, from
     * that broker as its leader (-1 when another or no broker leads).
     */
    public long lastHeardMs(final int otherBrokerId)
    {
        final RaftServer.Division division = partition.member().openDivision();
        if (division == null)
        {
            return -1;
        }
        final DivisionInfo info = division.getInfo();
        final String peer = RaftPeers.peerId(otherBrokerId).toString();
        if (info.isLeader())
        {
            return lastRpcAgeMs(info, peer);
        }
        if (info.getCurrentRole() == null)
        {
            return -1; // Ratis is starting the division (its role proto would fail on the missing role)
        }
        final RoleInfoProto role = info.getRoleInfoProto();
        if (role.hasFollowerInfo() && role.getFollowerInfo().hasLeaderInfo() &&
            role.getFollowerInfo().getLeaderInfo().getId().getId().toStringUtf8().equals(peer))
        {
            return role.getFollowerInfo().getLeaderInfo().getLastRpcElapsedTimeMs();
        }
        return -1;
    }

    /** Whether {@code otherBrokerId} is a voter of this group's current configuration. */
    public boolean isVoter(final int otherBrokerId)
    {
        final RaftServer.Division division = partition.member().openDivision();
        if (division == null)
        {
            return false;
        }
        final RaftPeerId peer = RaftPeers.peerId(otherBrokerId);
        return division.getRaftConf().getCurrentPeers().stream().anyMatch((p) -> p.getId().equals(peer));
    }

    /** The first in-sync follower, the preferred broker first, then in placement order; -1 when there is none. */
    public int inSyncFollower(final List<Integer> placement)
    {
        final int preferredBrokerId = partition.preferredBrokerId();
        if (preferredBrokerId != brokerId && outOfSyncReason(preferredBrokerId) == null)
        {
            return preferredBrokerId;
        }
        for (final int candidate : placement)
        {
            if (candidate != brokerId && outOfSyncReason(candidate) == null)
            {
                return candidate;
            }
        }
        return -1;
    }

    /** Whether this leader heard from any follower within {@code within} (at least within {@link #maxRpcAgeMs}). */
    public boolean hasAnsweringFollower(final Duration within)
    {
        final RaftServer.Division division = partition.member().openDivision();
        if (division == null || !division.getInfo().isLeader())
        {
            return false;
        }
        final RoleInfoProto role = division.getInfo().getRoleInfoProto();
        final long bound = Math.max(within.toMillis(), maxRpcAgeMs(division));
        return role.hasLeaderInfo() && role.getLeaderInfo().getFollowerInfoList().stream()
            .anyMatch((follower) -> follower.getLastRpcElapsedTimeMs() <= bound);
    }

    /**
     * How long ago the leader may last have heard from a follower that keeps up: {@value #IN_SYNC_MAX_RPC_AGE_MS} ms, or
     * the group's minimum election timeout when that is longer ({@code sluice.broker.election-timeout}). An idle
     * leader talks to a follower only every half of that timeout (its heartbeat), so with a fixed bound below it an
     * idle follower would never count as in sync: no automatic balance, no controlled handover to it.
     */
    static long maxRpcAgeMs(final RaftServer.Division division)
    {
        return Math.max(IN_SYNC_MAX_RPC_AGE_MS, division.properties().minRpcTimeoutMs());
    }

    /**
     * Whether the group's configuration gives its peers different priorities: Ratis then moves the leadership to
     * the highest itself and refuses transfers elsewhere, so the preferred-leader balance leaves the group alone.
     */
    public boolean hasPeerPriorities()
    {
        final RaftServer.Division division = partition.member().division();
        return division != null && division.getRaftConf().getCurrentPeers().stream()
            .mapToInt(RaftPeer::getPriority).distinct().count() > 1;
    }

    /** Milliseconds since this leader last heard from the peer, or -1 when it is not a follower here. */
    private static long lastRpcAgeMs(final DivisionInfo info, final String peer)
    {
        final RoleInfoProto role = info.getRoleInfoProto();
        if (role.hasLeaderInfo())
        {
            for (final ServerRpcProto follower : role.getLeaderInfo().getFollowerInfoList())
            {
                if (follower.getId().getId().toStringUtf8().equals(peer))
                {
                    return follower.getLastRpcElapsedTimeMs();
                }
            }
        }
        return -1;
    }
}
