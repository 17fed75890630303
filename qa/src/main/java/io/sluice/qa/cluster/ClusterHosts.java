package io.sluice.qa.cluster;

import java.net.InetAddress;
import java.util.List;

/**
 * Where a {@link SluiceCluster}'s processes run: the address each binds and the command prefix that starts it there.
 * {@link #LOOPBACK} is one machine's loopback for all; the chaos harness gives each process a network namespace of
 * its own ({@code io.sluice.qa.network.NetworkLab}).
 */
public interface ClusterHosts
{
    ClusterHosts LOOPBACK = new ClusterHosts()
    {
        @Override
        public InetAddress brokerAddress(final int brokerId)
        {
            return InetAddress.getLoopbackAddress();
        }

        @Override
        public InetAddress gatewayAddress(final int index)
        {
            return InetAddress.getLoopbackAddress();
        }

        @Override
        public List<String> launcher(final String processName)
        {
            return List.of();
        }
    };

    InetAddress brokerAddress(int brokerId);

    InetAddress gatewayAddress(int index);

    /** Prepended to the process's command ({@code broker-<id>}, {@code gateway}, {@code gateway-<i>}); empty: none. */
    List<String> launcher(String processName);
}
