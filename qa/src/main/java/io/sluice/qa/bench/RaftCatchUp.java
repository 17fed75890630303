package io.sluice.qa.bench;

import io.sluice.broker.control.ControlGroup;
import io.sluice.broker.partition.Partition;
import io.sluice.broker.raft.RaftPeers;
import io.sluice.protocol.cluster.PartitionDistribution;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.util.TimeDuration;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Whether a restarted Raft peer has caught up in every group it is a member of, as the groups' leaders see it: the
 * same measure for a Sluice broker and for the bare Ratis server that stands in for it (which has no command port for
 * the gateway to ask). A group counts once its leader (asked with a Ratis group-info request) has had a reply from
 * the peer since it restarted and knows the peer has committed the leader's last log entry. One instance per restart;
 * a group once caught up stays counted. Not thread-safe.
 */
final class RaftCatchUp implements AutoCloseable
{
    private final RaftPeerId peerId;
    private final RaftClient client;
    private final List<RaftPeerId> others = new ArrayList<>();
    private final Set<RaftGroupId> waiting = new LinkedHashSet<>();
    /** The peer last found leading each group. */
    private final Map<RaftGroupId, RaftPeerId> leaders = new HashMap<>();

    RaftCatchUp(final PartitionDistribution distribution, final int brokerId)
    {
        this.peerId = RaftPeers.peerId(brokerId);
        final List<RaftPeer> peers = new ArrayList<>();
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            final InetSocketAddress raft = distribution.raftAddress(b);
            peers.add(RaftPeer.newBuilder().setId(RaftPeers.peerId(b)).setAddress(raft.getHostString() + ":" + raft.getPort())
                .build());
            if (b != brokerId)
            {
                others.add(RaftPeers.peerId(b));
            }
        }
        for (final int partitionId : distribution.partitionsOf(brokerId))
        {
            waiting.add(Partition.groupId(partitionId));
        }
        waiting.add(ControlGroup.GROUP_ID);
        final RaftProperties properties = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties, TimeDuration.valueOf(1, TimeUnit.SECONDS));
        this.client = RaftClient.newBuilder().setProperties(properties)
            .setRaftGroup(RaftGroup.valueOf(ControlGroup.GROUP_ID, peers)).build();
    }

    /** The groups still waiting for the peer. */
    int waiting()
    {
        return waiting.size();
    }

    /**
     * Asks the leaders of the groups still waiting; true once every group has caught up. {@code restartedMs}: how long
     * ago the peer's process started (a reply older than that was from before the restart).
     */
    boolean caughtUp(final long restartedMs)
    {
        waiting.removeIf(groupId -> caughtUp(groupId, restartedMs));
        return waiting.isEmpty();
    }

    private boolean caughtUp(final RaftGroupId groupId, final long restartedMs)
    {
        final List<RaftPeerId> order = new ArrayList<>(others);
        final RaftPeerId known = leaders.get(groupId);
        if (known != null)
        {
            order.remove(known);
            order.add(0, known);
        }
        for (final RaftPeerId candidate : order)
        {
            final GroupInfoReply reply;
            try
            {
                reply = client.getGroupManagementApi(candidate).info(groupId);
            }
            catch (final IOException | RuntimeException e)
            {
                continue; // gRPC's own failures (a deadline) are unchecked: asked again next round
            }
            final RoleInfoProto role = reply.getRoleInfoProto();
            if (role == null || role.getRole() != RaftPeerRole.LEADER)
            {
                continue;
            }
            leaders.put(groupId, candidate);
            boolean heardSinceRestart = false;
            for (final ServerRpcProto follower : role.getLeaderInfo().getFollowerInfoList())
            {
                if (follower.getId().getId().equals(peerId.toByteString()) &&
                    follower.getLastRpcElapsedTimeMs() < restartedMs)
                {
                    heardSinceRestart = true;
                }
            }
            final long last = reply.getLogInfoProto().getLastEntry().getIndex();
            for (final CommitInfoProto commit : reply.getCommitInfos())
            {
                if (commit.getServer().getId().equals(peerId.toByteString()))
                {
                    return heardSinceRestart && commit.getCommitIndex() >= last;
                }
            }
            return false;
        }
        return false;
    }

    @Override
    public void close() throws IOException
    {
        client.close();
    }
}
