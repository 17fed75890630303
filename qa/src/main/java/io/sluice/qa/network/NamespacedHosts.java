package io.sluice.qa.network;

import io.sluice.qa.cluster.ClusterHosts;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * A cluster placed in a {@link NetworkLab}: broker {@code i} on host {@code b<i>}, gateway 0 on host {@code gw}
 * ({@link #hostNames}). Each process binds its own host's address.
 */
public final class NamespacedHosts implements ClusterHosts
{
    public static final String GATEWAY = "gw";

    private final NetworkLab lab;

    public NamespacedHosts(final NetworkLab lab)
    {
        this.lab = lab;
    }

    /** The lab's host names for {@code brokers} brokers and one gateway. */
    public static List<String> hostNames(final int brokers)
    {
        final List<String> names = new ArrayList<>();
        for (int i = 0; i < brokers; i++)
        {
            names.add(broker(i));
        }
        names.add(GATEWAY);
        return names;
    }

    public static String broker(final int brokerId)
    {
        return "b" + brokerId;
    }

    @Override
    public InetAddress brokerAddress(final int brokerId)
    {
        return lab.address(broker(brokerId));
    }

    @Override
    public InetAddress gatewayAddress(final int index)
    {
        if (index != 0)
        {
            throw new IllegalArgumentException("one gateway a lab: gateway " + index + " has no host");
        }
        return lab.address(GATEWAY);
    }

    @Override
    public List<String> launcher(final String processName)
    {
        if (processName.startsWith("broker-"))
        {
            return lab.launcher(broker(Integer.parseInt(processName.substring("broker-".length()))));
        }
        if (processName.equals("gateway"))
        {
            return lab.launcher(GATEWAY);
        }
        throw new IllegalArgumentException("no host for process " + processName);
    }
}
