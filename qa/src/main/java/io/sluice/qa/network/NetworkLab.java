package io.sluice.qa.network;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Hosts of their own on one machine: each named host is a Linux network namespace with one address on a bridge this
 * lab creates (a veth pair each), so processes started in them ({@link #launcher}) talk over real interfaces, not one
 * loopback. The bridge carries an address of the root namespace too ({@link #rootAddress}), through which the test
 * JVM reaches the hosts. Faults are nftables rules inside the namespaces: {@link #block} drops, in one host, every
 * packet from another, so a one-way loss is one rule and a partition two. Needs root, {@code ip} and {@code nft}
 * ({@link #unavailableReason}).
 * <p>
 * The subnet is {@code 10.231.K.0/24} with K picked at random among those no interface uses, and every name carries
 * K, so runs side by side do not meet. Everything created is listed in {@code <runDirectory>/network} before it is
 * created, and removed by {@link #close()}, by a JVM shutdown hook, and by a later lab over the same run directory
 * (a crashed run's leftovers). Thread-safe.
 */
public final class NetworkLab implements AutoCloseable
{
    private static final String TABLE = "sluice_chaos";
    private static final String NAT_TABLE = "sluice_chaos_nat";
    private static final Set<NetworkLab> OPEN = ConcurrentHashMap.newKeySet();
    private static final long COMMAND_TIMEOUT_SECONDS = 20;

    static
    {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> OPEN.forEach(NetworkLab::close), "sluice-qa-network-cleanup"));
    }

    private final int subnet;
    private final String bridge;
    private final Path record;
    private final Map<String, Integer> hosts = new LinkedHashMap<>();
    /** Per host, the hosts whose packets it drops now. */
    private final Map<String, Set<String>> blocked = new ConcurrentHashMap<>();
    private final Set<String> redirected = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private NetworkLab(final int subnet, final Path record)
    {
        this.subnet = subnet;
        this.bridge = "slc" + subnet + "br";
        this.record = record;
    }

    /** Why this machine cannot run a lab (not root, no {@code ip}, no {@code nft}, namespaces refused), or empty. */
    public static Optional<String> unavailableReason()
    {
        if (!"root".equals(System.getProperty("user.name")))
        {
            return Optional.of("network namespaces need root; running as " + System.getProperty("user.name"));
        }
        for (final String tool : List.of("ip", "nft"))
        {
            if (!onPath(tool))
            {
                return Optional.of("'" + tool + "' is not installed (iproute2, nftables)");
            }
        }
        final String probe = "slcprobe" + ProcessHandle.current().pid();
        try
        {
            run(List.of("ip", "netns", "add", probe));
            run(List.of("ip", "netns", "exec", probe, "nft", "list", "ruleset"));
            return Optional.empty();
        }
        catch (final RuntimeException ex)
        {
            return Optional.of("cannot create a network namespace with nftables in it: " + ex.getMessage());
        }
        finally
        {
            quietly(List.of("ip", "netns", "del", probe));
        }
    }

    /**
     * Creates the bridge and one namespace a host, named {@code hostNames} (short words: {@code b0}, {@code gw}), with
     * addresses .1, .2, ... in that order; the root namespace gets .254.
     */
    public static NetworkLab create(final Path runDirectory, final List<String> hostNames)
    {
        final Path record = runDirectory.resolve("network");
        removeLeftovers(record);
        final Set<Integer> used = subnetsInUse();
        for (int attempt = 0; attempt < 20; attempt++)
        {
            final int subnet = ThreadLocalRandom.current().nextInt(1, 250);
            if (used.contains(subnet))
            {
                continue;
            }
            final NetworkLab lab = new NetworkLab(subnet, record);
            try
            {
                lab.remember("link " + lab.bridge);
                run(List.of("ip", "link", "add", lab.bridge, "type", "bridge"));
            }
            catch (final RuntimeException taken)
            {
                continue; // another run took it between the listing and now
            }
            OPEN.add(lab);
            try
            {
                lab.setUp(hostNames);
                return lab;
            }
            catch (final RuntimeException ex)
            {
                lab.close();
                throw ex;
            }
        }
        throw new IllegalStateException("no free subnet 10.231.K.0/24 found in 20 attempts");
    }

    private void setUp(final List<String> hostNames)
    {
        run(List.of("ip", "addr", "add", "10.231." + subnet + ".254/24", "dev", bridge));
        run(List.of("ip", "link", "set", bridge, "up"));
        int index = 1;
        for (final String host : hostNames)
        {
            if (!host.matches("[a-z0-9]{1,6}") || hosts.containsKey(host))
            {
                throw new IllegalArgumentException("host name '" + host + "' must be 1-6 lower-case letters or digits, once");
            }
            hosts.put(host, index);
            final String namespace = namespace(host);
            final String veth = "slc" + subnet + "h" + index;
            remember("netns " + namespace);
            remember("link " + veth); // a namespace can outlive its deletion (a socket still closing): drop its link too
            run(List.of("ip", "netns", "add", namespace));
            run(List.of("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", namespace));
            run(List.of("ip", "link", "set", veth, "master", bridge, "up"));
            inside(host, "ip", "addr", "add", address(host).getHostAddress() + "/24", "dev", "eth0");
            inside(host, "ip", "link", "set", "eth0", "up");
            inside(host, "ip", "link", "set", "lo", "up");
            inside(host, "nft", "add", "table", "inet", TABLE);
            inside(host, "nft", "add", "chain", "inet", TABLE, "input",
                "{ type filter hook input priority -10; policy accept; }");
            inside(host, "nft", "add", "chain", "inet", TABLE, "output",
                "{ type filter hook output priority -10; policy accept; }");
            inside(host, "nft", "add", "table", "ip", NAT_TABLE);
            inside(host, "nft", "add", "chain", "ip", NAT_TABLE, "output",
                "{ type nat hook output priority -100; policy accept; }");
            blocked.put(host, ConcurrentHashMap.newKeySet());
            index++;
        }
    }

    public List<String> hostNames()
    {
        return List.copyOf(hosts.keySet());
    }

    /** The host's address on the bridge. */
    public InetAddress address(final String host)
    {
        final Integer index = hosts.get(host);
        if (index == null)
        {
            throw new IllegalArgumentException("no host '" + host + "' in this lab: " + hosts.keySet());
        }
        return ip("10.231." + subnet + "." + index);
    }

    /** The root namespace's address on the bridge: where the test JVM's connections to the hosts come from. */
    public InetAddress rootAddress()
    {
        return ip("10.231." + subnet + ".254");
    }

    /** The command prefix that runs a program in the host's namespace ({@code ip netns exec} execs it: same pid). */
    public List<String> launcher(final String host)
    {
        address(host);
        return List.of("ip", "netns", "exec", namespace(host));
    }

    /** From now on {@code to} drops every packet from {@code from} (one direction; idempotent). */
    public synchronized void block(final String from, final String to)
    {
        address(from);
        if (from.equals(to) || !blocked.get(to).add(from))
        {
            return;
        }
        inside(to, "nft", "add", "rule", "inet", TABLE, "input", "ip", "saddr", address(from).getHostAddress(), "drop");
    }

    /** Both directions between every host of {@code side} and every host of {@code other}. */
    public synchronized void partition(final Iterable<String> side, final Iterable<String> other)
    {
        for (final String a : side)
        {
            for (final String b : other)
            {
                block(a, b);
                block(b, a);
            }
        }
    }

    /**
     * From now on {@code from}'s connections to {@code to}'s {@code port} go to {@code via} instead (a
     * {@link LatencyProxy} on the root address, forwarding to the target): a DNAT rule in {@code from}'s namespace.
     * Its connections open now are reset, so they come back through {@code via}. Undone by {@link #heal()}.
     */
    public synchronized void redirect(final String from, final String to, final int port, final InetSocketAddress via)
    {
        steer(from, to, port, via);
        inside(from, "nft", "add", "rule", "inet", TABLE, "output", "ip", "daddr", address(to).getHostAddress(), "tcp",
            "dport", Integer.toString(port), "reject", "with", "tcp", "reset");
        try
        {
            Thread.sleep(300); // the open connections send something and are reset meanwhile (heartbeats: ~100 ms)
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        inside(from, "nft", "flush", "chain", "inet", TABLE, "output");
    }

    /**
     * From now on {@code from}'s new connections to {@code to}'s {@code port} go to {@code via} instead (a DNAT rule in
     * {@code from}'s namespace); connections open now are left alone, so call it before the processes start (the
     * hosts-scale benchmark delays every link this way). Undone by {@link #heal()}.
     */
    public synchronized void steer(final String from, final String to, final int port, final InetSocketAddress via)
    {
        inside(from, "nft", "add", "rule", "ip", NAT_TABLE, "output", "ip", "daddr", address(to).getHostAddress(), "tcp",
            "dport", Integer.toString(port), "dnat", "to", via.getAddress().getHostAddress() + ":" + via.getPort());
        redirected.add(from);
    }

    /** Every rule gone: every host hears every other again, and no connection is redirected any more. */
    public synchronized void heal()
    {
        for (final String host : redirected)
        {
            inside(host, "nft", "flush", "chain", "ip", NAT_TABLE, "output");
        }
        redirected.clear();
        for (final String host : hosts.keySet())
        {
            if (!blocked.get(host).isEmpty())
            {
                inside(host, "nft", "flush", "chain", "inet", TABLE, "input");
                blocked.get(host).clear();
            }
        }
    }

    /** Per host, the hosts it does not hear now (for reports). */
    public synchronized Map<String, Set<String>> blocked()
    {
        final Map<String, Set<String>> copy = new LinkedHashMap<>();
        blocked.forEach((host, from) -> copy.put(host, Set.copyOf(from)));
        return copy;
    }

    /** Removes the namespaces (their veth ends go with them) and the bridge. Idempotent. */
    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        OPEN.remove(this);
        removeLeftovers(record);
    }

    /** Whether a namespace or link of this lab still exists (after {@link #close()}: a leak). */
    public boolean leftBehind()
    {
        final java.util.regex.Pattern mine = java.util.regex.Pattern.compile("\\bslc" + subnet + "(br|h\\d+|-)");
        return mine.matcher(run(List.of("ip", "-o", "link"))).find() || mine.matcher(run(List.of("ip", "netns", "list"))).find();
    }

    private String namespace(final String host)
    {
        return "slc" + subnet + "-" + host;
    }

    private void inside(final String host, final String... command)
    {
        final List<String> full = new ArrayList<>(launcher(host));
        full.addAll(List.of(command));
        run(full);
    }

    private void remember(final String line)
    {
        try
        {
            Files.createDirectories(record.getParent());
            Files.writeString(record, line + System.lineSeparator(), StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write " + record, ex);
        }
    }

    /** Deletes what a record lists (namespaces first, then links), then the record. */
    private static void removeLeftovers(final Path record)
    {
        if (!Files.exists(record))
        {
            return;
        }
        try
        {
            final List<String> lines = Files.readAllLines(record);
            for (final String line : lines)
            {
                if (line.startsWith("netns "))
                {
                    quietly(List.of("ip", "netns", "del", line.substring(6).trim()));
                }
            }
            for (final String line : lines)
            {
                if (line.startsWith("link "))
                {
                    quietly(List.of("ip", "link", "del", line.substring(5).trim()));
                }
            }
            Files.delete(record);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read " + record, ex);
        }
    }

    private static Set<Integer> subnetsInUse()
    {
        final Set<Integer> used = new java.util.HashSet<>();
        for (final String line : run(List.of("ip", "-o", "addr")).split("\\R"))
        {
            final java.util.regex.Matcher matcher = java.util.regex.Pattern.compile("10\\.231\\.(\\d+)\\.").matcher(line);
            while (matcher.find())
            {
                used.add(Integer.parseInt(matcher.group(1)));
            }
        }
        for (final String line : run(List.of("ip", "-o", "link")).split("\\R"))
        {
            final java.util.regex.Matcher matcher = java.util.regex.Pattern.compile("slc(\\d+)br").matcher(line);
            while (matcher.find())
            {
                used.add(Integer.parseInt(matcher.group(1)));
            }
        }
        return used;
    }

    private static InetAddress ip(final String text)
    {
        try
        {
            return InetAddress.getByName(text);
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalStateException(text, ex);
        }
    }

    private static boolean onPath(final String tool)
    {
        for (final String dir : List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin"))
        {
            if (Files.isExecutable(Path.of(dir, tool)))
            {
                return true;
            }
        }
        return false;
    }

    private static void quietly(final List<String> command)
    {
        try
        {
            run(command);
        }
        catch (final RuntimeException ignore)
        {
            // cleaning up what may already be gone
        }
    }

    /** Runs a command to its end; fails with its output unless it exits 0. Returns its output. */
    static String run(final List<String> command)
    {
        try
        {
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            final byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish in " + COMMAND_TIMEOUT_SECONDS + " s");
            }
            final String text = new String(output, StandardCharsets.UTF_8);
            if (process.exitValue() != 0)
            {
                throw new IllegalStateException(String.join(" ", command) + " exited " + process.exitValue() + ": " + text.trim());
            }
            return text;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot run " + String.join(" ", command), ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + String.join(" ", command), ex);
        }
    }
}
