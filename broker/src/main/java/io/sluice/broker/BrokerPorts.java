package io.sluice.broker;

import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.tls.TlsModeProbe;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/** A broker's ports before it starts: free, and the peers' command ports for the TLS mode probe. */
final class BrokerPorts
{
    private BrokerPorts()
    {
    }

    /** The command ports of the other brokers, for the TLS mode probe. */
    static List<TlsModeProbe.Peer> peersOf(final PartitionDistribution distribution, final int nodeId)
    {
        final List<TlsModeProbe.Peer> peers = new ArrayList<>();
        for (int brokerId = 0; brokerId < distribution.brokerCount(); brokerId++)
        {
            final InetSocketAddress address = distribution.commandAddress(brokerId);
            if (brokerId != nodeId && address.getPort() != 0)
            {
                peers.add(new TlsModeProbe.Peer(address, "broker " + brokerId + " at " + address.getHostString() + ":" +
                    address.getPort()));
            }
        }
        return peers;
    }

    static InetSocketAddress resolve(final InetSocketAddress address)
    {
        return address.isUnresolved() ? new InetSocketAddress(address.getHostString(), address.getPort()) : address;
    }

    static void checkPortFree(final int nodeId, final InetSocketAddress address)
    {
        try (ServerSocket socket = new ServerSocket())
        {
            socket.setReuseAddress(true);
            socket.bind(address);
        }
        catch (final IOException e)
        {
            throw portInUse(nodeId, address, e);
        }
    }

    static boolean isBindFailure(final Throwable failure)
    {
        for (Throwable t = failure; t != null; t = t.getCause())
        {
            if (t instanceof java.net.BindException)
            {
                return true;
            }
        }
        return false;
    }

    static InvalidClusterConfigException portInUse(
        final int nodeId, final InetSocketAddress address, final Exception cause)
    {
        final InvalidClusterConfigException failure = new InvalidClusterConfigException(
            PartitionDistribution.BROKERS_SETTING, "port " + address.getPort() + " of broker " + nodeId +
            " is in use (" + address.getHostString() + ": " + cause.getMessage() + ")");
        failure.initCause(cause);
        return failure;
    }
}
