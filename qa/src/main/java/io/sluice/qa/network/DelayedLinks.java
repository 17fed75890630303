package io.sluice.qa.network;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Latency on every link of a {@link NetworkLab}: one {@link LatencyProxy} for each listening (host, port), on the lab's
 * root address, and in every other host a rule steering new connections to that port through it
 * ({@link NetworkLab#steer}). So every connection between two hosts is delayed by {@code delayMillis} each way (the
 * kernel has no netem), and the root namespace reaches a port with the same delay through {@link #via}. Install it
 * before the processes start: connections already open stay direct. Closing it closes the proxies (and every
 * connection through them); the lab's close removes the rules.
 */
public final class DelayedLinks implements AutoCloseable
{
    private final Map<InetSocketAddress, LatencyProxy> proxies = new LinkedHashMap<>();

    private DelayedLinks()
    {
    }

    /** Delays every connection to each of {@code listening}'s (host → ports) from every other host of the lab. */
    public static DelayedLinks install(final NetworkLab lab, final Map<String, List<Integer>> listening,
        final long delayMillis, final long seed)
    {
        final DelayedLinks links = new DelayedLinks();
        try
        {
            long proxySeed = seed;
            for (final Map.Entry<String, List<Integer>> host : listening.entrySet())
            {
                for (final int port : host.getValue())
                {
                    final InetSocketAddress target = new InetSocketAddress(lab.address(host.getKey()), port);
                    final LatencyProxy proxy = new LatencyProxy(lab.rootAddress(), target, delayMillis, 0, proxySeed++);
                    links.proxies.put(target, proxy);
                    for (final String other : lab.hostNames())
                    {
                        if (!other.equals(host.getKey()))
                        {
                            lab.steer(other, host.getKey(), port, proxy.address());
                        }
                    }
                }
            }
            return links;
        }
        catch (final IOException ex)
        {
            links.close();
            throw new UncheckedIOException("cannot open a latency proxy on " + lab.rootAddress(), ex);
        }
        catch (final RuntimeException ex)
        {
            links.close();
            throw ex;
        }
    }

    /** The address through which the root namespace reaches {@code target} with the same delay. */
    public InetSocketAddress via(final InetSocketAddress target)
    {
        final LatencyProxy proxy = proxies.get(target);
        if (proxy == null)
        {
            throw new IllegalArgumentException("no delayed link to " + target + "; delayed: " + proxies.keySet());
        }
        return proxy.address();
    }

    public int proxies()
    {
        return proxies.size();
    }

    /** Connections and bytes each proxy carried, for the run's log: a delay nothing went through proves nothing. */
    public List<String> carried()
    {
        final List<String> lines = new ArrayList<>();
        proxies.forEach((target, proxy) -> lines.add(target + ": " + proxy.carried()));
        return lines;
    }

    /** Connections through all proxies so far. */
    public long connections()
    {
        return proxies.values().stream().mapToLong(LatencyProxy::connections).sum();
    }

    @Override
    public void close()
    {
        proxies.values().forEach(LatencyProxy::close);
    }
}
