package io.sluice.qa.cluster;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Starts the children from a class data sharing archive of {@code sluice.jar}, as docs/operations.md tells
 * operators to: the jar extracted by Spring Boot's {@code jarmode=tools}, and an archive of the classes a small
 * standalone cluster loads. A child then starts in about half the time (broker 3.6 → 1.9 s, gateway 5.0 → 2.6 s,
 * measured quiet), and on a loaded 2-core machine that is what a restarted broker waits on before it takes its
 * leaderships back.
 * <p>
 * Made once per jar build (keyed by its size and modification time) under {@code qa/target/cds}, under a file lock
 * so two test JVMs do not make it twice. When making it fails, the children run the jar as it is (one line says
 * why); {@code -Dsluice.qa.cds=false} turns it off.
 */
public final class ClassDataSharing
{
    public static final String ENABLED_PROPERTY = "sluice.qa.cds";
    private static final long TRAINING_TIMEOUT_SECONDS = 180;
    private static final ConcurrentHashMap<Path, Launch> LAUNCHES = new ConcurrentHashMap<>();

    /** What to put after {@code java} and the JVM options: {@code -XX:SharedArchiveFile=… -jar <jar>}. */
    public record Launch(Path jar, List<String> jvmOptions)
    {
    }

    private ClassDataSharing()
    {
    }

    /** How to start {@code fatJar}: from its archive when there is one (made now if needed), else as it is. */
    public static Launch launchOf(final Path fatJar)
    {
        if (!Boolean.parseBoolean(System.getProperty(ENABLED_PROPERTY, "true")))
        {
            return new Launch(fatJar, List.of());
        }
        return LAUNCHES.computeIfAbsent(fatJar.toAbsolutePath().normalize(), ClassDataSharing::prepare);
    }

    private static Launch prepare(final Path fatJar)
    {
        try
        {
            final Path root = Path.of(System.getProperty("sluice.qa.runs", "target/qa-runs")).toAbsolutePath()
                .getParent().resolve("cds");
            Files.createDirectories(root);
            final Path folder = root.resolve(Files.size(fatJar) + "-" + Files.getLastModifiedTime(fatJar).toMillis());
            final Path jar = folder.resolve(fatJar.getFileName());
            final Path archive = folder.resolve("sluice.jsa");
            try (FileChannel lockFile = FileChannel.open(root.resolve("lock"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE); FileLock ignored = lockFile.lock())
            {
                if (!Files.isRegularFile(archive))
                {
                    train(fatJar, folder, jar, archive);
                }
            }
            return new Launch(jar, List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:auto"));
        }
        catch (final IOException | RuntimeException e)
        {
            System.err.println("[sluice-qa] no class data sharing archive, the children start from " + fatJar + ": " + e);
            return new Launch(fatJar, List.of());
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            return new Launch(fatJar, List.of());
        }
    }

    /**
     * Extracts the jar, then runs it once as a small standalone cluster (three brokers, three partitions, loopback
     * ports): up to its first acknowledged write and exported record, then SIGTERM (controlled shutdown). So the
     * archive holds the classes of elections, replication, writes, exporting and leadership transfers too, not only
     * those of the start; the JVM writes it as it exits.
     */
    private static void train(final Path fatJar, final Path folder, final Path jar, final Path archive)
        throws IOException, InterruptedException
    {
        final long start = System.nanoTime();
        final Path log = folder.resolveSibling(folder.getFileName() + "-training.log");
        run(List.of(java(), "-Djarmode=tools", "-jar", fatJar.toString(), "extract", "--force", "--destination",
            folder.toString()), log, "extracting " + fatJar);
        final Path data = Files.createTempDirectory(folder, "training-data");
        final int clientPort = PortAllocator.freePort();
        final List<String> command = new ArrayList<>();
        command.add(java());
        command.addAll(SluiceCluster.configuredJvmOptions());
        command.addAll(List.of("-XX:ArchiveClassesAtExit=" + archive, "-Xlog:cds=off", "-Xlog:cds+dynamic=off",
            "-jar", jar.toString(), "standalone",
            "--sluice.cluster.brokers=" + PortAllocator.loopbackBrokerList(3), "--sluice.cluster.partitions=3",
            "--sluice.cluster.replication-factor=3", "--server.port=" + clientPort,
            "--management.server.port=" + PortAllocator.freePort(), "--sluice.data-dir=" + data));
        final Process process = start(command, log);
        try
        {
            writeUntilAcknowledged(clientPort, process);
            Thread.sleep(1_000); // the exporters' first round
            process.destroy(); // SIGTERM: controlled shutdown, then the archive is written at exit
            if (!process.waitFor(TRAINING_TIMEOUT_SECONDS, TimeUnit.SECONDS))
            {
                throw new IOException("the training run did not exit after SIGTERM; see " + log);
            }
        }
        finally
        {
            process.destroyForcibly();
        }
        if (!Files.isRegularFile(archive))
        {
            throw new IOException("the training run wrote no archive; see " + log);
        }
        System.err.println("[sluice-qa] class data sharing archive of " + fatJar.getFileName() + " made in " +
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms: " + archive);
    }

    /** Writes one record per partition key until one is acknowledged (the partitions elect their leaders first). */
    private static void writeUntilAcknowledged(final int clientPort, final Process process)
        throws IOException, InterruptedException
    {
        final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        final HttpRequest write = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + clientPort + "/v1/records"))
            .timeout(Duration.ofSeconds(5)).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("[{\"key\": \"a\", \"payload\": {}}, " +
                "{\"key\": \"b\", \"payload\": {}}, {\"key\": \"c\", \"payload\": {}}]")).build();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TRAINING_TIMEOUT_SECONDS);
        while (System.nanoTime() - deadline < 0)
        {
            if (!process.isAlive())
            {
                throw new IOException("the training run exited " + process.exitValue() + " before its first write");
            }
            try
            {
                if (client.send(write, HttpResponse.BodyHandlers.discarding()).statusCode() == 200)
                {
                    return;
                }
            }
            catch (final IOException notYetListening)
            {
                // the gateway is still starting
            }
            Thread.sleep(250);
        }
        throw new IOException("the training run acknowledged no write within " + TRAINING_TIMEOUT_SECONDS + " s");
    }

    private static Process start(final List<String> command, final Path log) throws IOException
    {
        return new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile())).start();
    }

    private static void run(final List<String> command, final Path log, final String what)
        throws IOException, InterruptedException
    {
        final Process process = start(command, log);
        if (!process.waitFor(TRAINING_TIMEOUT_SECONDS, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new IOException(what + " did not end within " + TRAINING_TIMEOUT_SECONDS + " s; see " + log);
        }
        if (process.exitValue() != 0)
        {
            throw new IOException(what + " exited " + process.exitValue() + "; see " + log);
        }
    }

    private static String java()
    {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
