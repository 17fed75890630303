package io.sluice.qa.chaos;

import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.network.LatencyProxy;
import io.sluice.qa.network.NamespacedHosts;
import io.sluice.qa.network.NetworkLab;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Injects faults into a cluster in a {@link NetworkLab}, one at a time, from a seed: which fault, on which broker, for
 * how long and how long the quiet after it lasts all come from {@code new Random(seed)}, so a seed replays the same
 * schedule (the moments relative to the workload depend on the machine). Kinds (report names):
 * {@code partition} (one broker cut from everyone, or a minority/majority split with the gateway on either side),
 * {@code one-way} (a broker hears the others but is not heard), {@code gateway-cut} (the gateway cut from some
 * brokers), {@code kill} (SIGKILL, restarted at the heal), {@code sigstop} (SIGSTOP, SIGCONT at the heal),
 * {@code latency} (one broker's connections to another through a {@link LatencyProxy}: 50-200 ms and jitter).
 * Every fault is healed before the next, and {@link #stop()} heals whatever is on.
 */
public final class Nemesis
{
    public static final List<String> KINDS = List.of("partition", "one-way", "gateway-cut", "kill", "sigstop", "latency");

    private final SluiceCluster cluster;
    private final NetworkLab lab;
    private final Random random;
    private final HistoryRecorder recorder;
    private final AtomicBoolean running = new AtomicBoolean();
    private final List<Fault> faults = new ArrayList<>();
    private Thread thread;
    private volatile Runnable heal = () -> { };
    private volatile Throwable crash;

    /** A fault as it happened: kind, what exactly, from when to when (history clock; end -1 while on). */
    public record Fault(String kind, String description, long start, long end)
    {
    }

    public Nemesis(final SluiceCluster cluster, final NetworkLab lab, final long seed, final HistoryRecorder recorder)
    {
        this.cluster = cluster;
        this.lab = lab;
        this.random = new Random(seed);
        this.recorder = recorder;
    }

    public void start()
    {
        running.set(true);
        thread = new Thread(() ->
        {
            try
            {
                Workload.sleep(2_000 + random.nextInt(3_000));
                while (running.get())
                {
                    inject();
                    sleepWhileRunning(3_000 + random.nextInt(7_000));
                    healNow();
                    sleepWhileRunning(2_000 + random.nextInt(5_000));
                }
            }
            catch (final Throwable ex)
            {
                crash = ex;
            }
        }, "chaos-nemesis");
        thread.setDaemon(true);
        thread.start();
    }

    /** Stops injecting and heals what is on: rules flushed, stopped brokers continued, killed brokers started. */
    public void stop()
    {
        running.set(false);
        if (thread != null)
        {
            try
            {
                thread.join(60_000);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
        healNow();
        if (crash != null)
        {
            throw new IllegalStateException("the nemesis crashed", crash);
        }
    }

    public synchronized List<Fault> faults()
    {
        return List.copyOf(faults);
    }

    /** Count of each kind injected. */
    public synchronized Map<String, Integer> counts()
    {
        final Map<String, Integer> counts = new LinkedHashMap<>();
        faults.forEach(fault -> counts.merge(fault.kind(), 1, Integer::sum));
        return counts;
    }

    private void inject()
    {
        final int brokers = cluster.brokerCount();
        final String kind = KINDS.get(random.nextInt(KINDS.size()));
        final int victim = random.nextInt(brokers);
        final String victimHost = NamespacedHosts.broker(victim);
        final List<String> others = new ArrayList<>();
        for (int b = 0; b < brokers; b++)
        {
            if (b != victim)
            {
                others.add(NamespacedHosts.broker(b));
            }
        }
        final boolean gatewayWithMinority = random.nextBoolean();
        final boolean isolateWholly = random.nextBoolean();
        final int cutCount = 1 + random.nextInt(brokers - 1);
        final long latency = 50 + random.nextInt(150);
        final long proxySeed = random.nextLong();
        final String description;
        switch (kind)
        {
            case "partition" ->
            {
                final List<String> minority = new ArrayList<>(List.of(victimHost));
                final List<String> majority = new ArrayList<>(others);
                if (isolateWholly)
                {
                    majority.add(NamespacedHosts.GATEWAY);
                    description = "broker " + victim + " isolated from every host";
                }
                else
                {
                    (gatewayWithMinority ? minority : majority).add(NamespacedHosts.GATEWAY);
                    description = "split " + minority + " | " + majority;
                }
                lab.partition(minority, majority);
                heal = lab::heal;
            }
            case "one-way" ->
            {
                for (final String other : others)
                {
                    lab.block(victimHost, other);
                }
                lab.block(victimHost, NamespacedHosts.GATEWAY);
                description = "broker " + victim + " hears every host but is heard by none";
                heal = lab::heal;
            }
            case "gateway-cut" ->
            {
                final List<String> cut = new ArrayList<>();
                for (int i = 0; i < cutCount; i++)
                {
                    cut.add(NamespacedHosts.broker((victim + i) % brokers));
                }
                lab.partition(List.of(NamespacedHosts.GATEWAY), cut);
                description = "gateway cut from " + cut;
                heal = lab::heal;
            }
            case "kill" ->
            {
                cluster.broker(victim).kill();
                description = "broker " + victim + " SIGKILLed";
                heal = () ->
                {
                    if (!cluster.broker(victim).isAlive())
                    {
                        cluster.startBroker(victim);
                    }
                };
            }
            case "sigstop" ->
            {
                cluster.suspendBroker(victim);
                description = "broker " + victim + " SIGSTOPped";
                heal = () ->
                {
                    if (cluster.broker(victim).isSuspended())
                    {
                        cluster.resumeBroker(victim);
                    }
                };
            }
            case "latency" ->
            {
                final int to = (victim + 1) % brokers;
                final List<LatencyProxy> proxies = new ArrayList<>();
                try
                {
                    // the command port and the Raft port (command + 1) of the other broker
                    for (int offset = 0; offset <= 1; offset++)
                    {
                        final java.net.InetSocketAddress target = new java.net.InetSocketAddress(
                            lab.address(NamespacedHosts.broker(to)), cluster.brokerCommandAddress(to).getPort() + offset);
                        final LatencyProxy proxy = new LatencyProxy(lab.rootAddress(), target, latency, latency / 2,
                            proxySeed + offset);
                        proxies.add(proxy);
                        lab.redirect(victimHost, NamespacedHosts.broker(to), target.getPort(), proxy.address());
                    }
                }
                catch (final java.io.IOException ex)
                {
                    proxies.forEach(LatencyProxy::close);
                    throw new java.io.UncheckedIOException("cannot start a latency proxy", ex);
                }
                description = "broker " + victim + " -> broker " + to + " delayed " + latency + " ms (+ up to " +
                    latency / 2 + " ms jitter)";
                heal = () ->
                {
                    lab.heal();
                    proxies.forEach(proxy -> cluster.log("nemesis: latency proxy to " + proxy.target() + " carried " +
                        proxy.carried()));
                    proxies.forEach(LatencyProxy::close);
                };
            }
            default -> throw new IllegalStateException("unknown fault kind " + kind);
        }
        synchronized (this)
        {
            faults.add(new Fault(kind, description, recorder.now(), -1));
        }
        cluster.log("nemesis: " + description);
    }

    private synchronized void healNow()
    {
        final Runnable current = heal;
        heal = () -> { };
        current.run();
        if (!faults.isEmpty() && faults.get(faults.size() - 1).end() < 0)
        {
            final Fault last = faults.remove(faults.size() - 1);
            faults.add(new Fault(last.kind(), last.description(), last.start(), recorder.now()));
            cluster.log("nemesis: healed " + last.description());
        }
    }

    private void sleepWhileRunning(final long millis)
    {
        final long until = System.nanoTime() + millis * 1_000_000;
        while (running.get() && System.nanoTime() - until < 0)
        {
            Workload.sleep(50);
        }
    }
}
