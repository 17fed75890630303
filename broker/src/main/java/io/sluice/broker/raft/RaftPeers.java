package io.sluice.broker.raft;

import io.sluice.protocol.cluster.PartitionDistribution;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * How the brokers and their groups are named in Raft, the same on every broker from configuration alone: a broker's
 * peer id is {@code broker-<id>}, a group's id a name-based UUID ("sluice-partition-3", "sluice-control-group").
 */
public final class RaftPeers
{
    private static final String PEER_PREFIX = "broker-";

    private RaftPeers()
    {
    }

    public static RaftPeerId peerId(final int brokerId)
    {
        return RaftPeerId.valueOf(PEER_PREFIX + brokerId);
    }

    /** Broker id of a peer id, or -1 when it is null or not a broker's. */
    public static int brokerIdOf(final RaftPeerId peerId)
    {
        if (peerId == null)
        {
            return -1;
        }
        final String id = peerId.toString();
        if (!id.startsWith(PEER_PREFIX))
        {
            return -1;
        }
        try
        {
            return Integer.parseInt(id.substring(PEER_PREFIX.length()));
        }
        catch (final NumberFormatException e)
        {
            return -1;
        }
    }

    /** The id of the group named {@code name}: the same UUID on every broker. */
    public static RaftGroupId groupId(final String name)
    {
        return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)));
    }

    /** Broker {@code brokerId} as a peer of a group, at its Raft address, starting in {@code role}. */
    public static RaftPeer peer(final PartitionDistribution distribution, final int brokerId, final RaftPeerRole role)
    {
        final InetSocketAddress address = distribution.raftAddress(brokerId);
        return RaftPeer.newBuilder()
            .setId(peerId(brokerId))
            .setAddress(address.getHostString() + ":" + address.getPort())
            .setStartupRole(role)
            .build();
    }
}
