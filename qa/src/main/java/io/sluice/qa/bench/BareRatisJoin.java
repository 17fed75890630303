package io.sluice.qa.bench;

import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.SluiceProcess;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The startup benchmark's baseline: a {@link BareRatisServer} process in place of a stopped broker of a running
 * cluster, timed from its process start to its Raft port accepting and to every group caught up ({@link RaftCatchUp},
 * the measure the broker's restarts get too). The first {@link #restart} stops the broker (SIGTERM) and copies its data
 * directory (outside the timing); each restart first stops the previous bare server and waits until the gateway sees
 * a leader for every partition on a running broker, so each start meets a settled cluster, as the broker's did.
 */
final class BareRatisJoin
{
    private static final Pattern STARTED = Pattern.compile("bare Ratis server \\d+ start: .* ([0-9]+) ms since the process started");

    /** One start's times from the process start: ns as seen from here, ms as the server logged its own start. */
    record Times(long listeningNs, long caughtUpNs, long startedMs)
    {
    }

    private final SluiceCluster cluster;
    private final int brokerId;
    private final Path dataDir;
    private final Duration timeout;
    private final SluiceProcess process;

    BareRatisJoin(final SluiceCluster cluster, final int brokerId, final List<String> jvmOptions, final Path directory,
        final Duration timeout)
    {
        this.cluster = cluster;
        this.brokerId = brokerId;
        this.dataDir = directory.resolve("data");
        this.timeout = timeout;
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(absoluteClassPath());
        command.add(BareRatisServer.class.getName());
        command.add(Integer.toString(brokerId));
        command.add(cluster.brokerList());
        command.add(Integer.toString(cluster.partitionCount()));
        command.add(Integer.toString(cluster.replicasOf(1).size()));
        command.add(dataDir.toString());
        this.process = new SluiceProcess("bare-ratis-" + brokerId, command, directory,
            directory.resolve("bare-ratis-" + brokerId + ".log"), cluster.runDirectory().resolve("pids"));
    }

    Times restart() throws IOException, InterruptedException
    {
        if (!Files.exists(dataDir))
        {
            cluster.stopBroker(brokerId);
            copy(cluster.brokerDataDirectory(brokerId), dataDir.resolve("broker-" + brokerId));
        }
        stop();
        cluster.awaitLeaders();
        final long logBefore = Files.exists(process.logFile()) ? Files.size(process.logFile()) : 0;
        final InetSocketAddress raft = cluster.distribution().raftAddress(brokerId);
        try (RaftCatchUp raftCatchUp = new RaftCatchUp(cluster.distribution(), brokerId))
        {
            final long startNs = System.nanoTime();
            process.start();
            long listening = -1;
            long caughtUp = -1;
            while (caughtUp < 0)
            {
                if (System.nanoTime() - startNs > timeout.toNanos())
                {
                    throw new IllegalStateException("bare Ratis server " + brokerId + " not back within " +
                        timeout.toSeconds() + " s (listening " + listening + ", groups still behind " +
                        raftCatchUp.waiting() + "); its log: " + process.logFile());
                }
                if (!process.isAlive())
                {
                    throw new IllegalStateException("bare Ratis server " + brokerId + " exited; its log: " +
                        process.logTail(40));
                }
                if (listening < 0 && BrokerJoin.accepts(raft))
                {
                    listening = System.nanoTime() - startNs;
                }
                if (listening >= 0 && raftCatchUp.caughtUp((System.nanoTime() - startNs) / 1_000_000))
                {
                    caughtUp = System.nanoTime() - startNs;
                }
                Thread.sleep(20);
            }
            final String log = Files.readString(process.logFile());
            final Matcher started = STARTED.matcher(log.substring((int)Math.min(logBefore, log.length())));
            return new Times(listening, caughtUp, started.find() ? Long.parseLong(started.group(1)) : -1);
        }
    }

    /** Stops the bare server (SIGTERM) if it runs. */
    void stop()
    {
        if (process.isAlive())
        {
            process.stop(Duration.ofSeconds(20));
        }
    }

    /** This JVM's class path with absolute entries: the server runs in another working directory. */
    private static String absoluteClassPath()
    {
        final List<String> entries = new ArrayList<>();
        for (final String entry : System.getProperty("java.class.path").split(File.pathSeparator))
        {
            if (!entry.isEmpty())
            {
                entries.add(Path.of(entry).toAbsolutePath().toString());
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    private static void copy(final Path from, final Path to) throws IOException
    {
        try (Stream<Path> paths = Files.walk(from))
        {
            paths.forEach(path ->
            {
                try
                {
                    final Path target = to.resolve(from.relativize(path).toString());
                    if (Files.isDirectory(path))
                    {
                        Files.createDirectories(target);
                    }
                    else
                    {
                        Files.copy(path, target);
                    }
                }
                catch (final IOException e)
                {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }
}
