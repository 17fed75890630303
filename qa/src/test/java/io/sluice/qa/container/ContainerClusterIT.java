package io.sluice.qa.container;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.sluice.kubernetes.Dockerfile;
import io.sluice.kubernetes.Manifests;
import io.sluice.protocol.tls.TestCertificates;
import io.sluice.protocol.tls.TlsFiles;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportFiles;
import io.sluice.qa.cluster.ExportingControlAnswer;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.GatewayClient;
import io.sluice.qa.cluster.PortAllocator;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Issue 17: the image of {@code dist/docker/Dockerfile}, built here offline, run as a cluster of containers the way
 * {@code dist/kubernetes} runs it: three broker containers and a gateway container, each with the image, command,
 * args, environment, user, memory limit, data volume and stop grace of its manifest. Only what a Kubernetes cluster
 * gives a pod is translated: the pod network becomes the host's loopback (distinct free ports, every server on
 * 127.0.0.1), the broker Service's DNS names become those addresses, the Secret's token a random one, the pod-index
 * label the ordinal, a PersistentVolumeClaim a folder of this run.
 * <p>
 * Skipped, saying why, on a machine that cannot run podman; in CI ({@code CI=true}), where {@code .ci/run}
 * installs podman, the same condition fails instead, so a broken setup cannot pass as a skip. Every container
 * is removed afterwards, whatever happened, and leftovers of a crashed run are removed before starting.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 15, unit = TimeUnit.MINUTES)
// Alone, with no other class's cluster beside it: building the image and running four containers under podman takes
// the 2 cores of CI, and a second cluster beside it made the manifests' own timeouts (the gateway's request timeout,
// the probes) fire, which this test must take as they are shipped.
@Isolated
class ContainerClusterIT
{
    private static final String LABEL = "io.sluice.qa.test=ContainerClusterIT";
    /** Where every broker and gateway container has the shared backup store (see {@link #backupStore}). */
    private static final String BACKUP_STORE_IN_CONTAINERS = "/var/lib/sluice-backups";
    private static final Duration PODMAN_CALL = Duration.ofSeconds(90);
    private static final Duration STARTUP = SluiceCluster.STARTUP_TIMEOUT;
    private static final Duration QUIET_PERIOD = Duration.ofSeconds(3);
    private static final Duration STATE_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(60));
    private static final String READINESS = "/actuator/health/readiness";

    @RegisterExtension
    static final QaRun RUN = new QaRun();
    /** The CA of the cluster TLS Secrets, made at the first Secret mounted. */
    private static TestCertificates authority;

    private final String token = UUID.randomUUID().toString();
    private final List<String> containers = new ArrayList<>();
    private final Map<String, Double> secondsToHealthy = new LinkedHashMap<>();
    private final Thread removal = new Thread(this::removeLeftovers, "remove-qa-containers");
    private Podman podman;
    private List<Manifests.Document> manifests;
    private Dockerfile dockerfile;
    private StatefulSet brokers;
    private Container brokerContainer;
    private Container gatewayContainer;
    private PodSpec gatewayPod;
    private String image;
    private List<Integer> brokerPorts;
    private String brokerList;
    private int clientPort;
    private int managementPort;
    private GatewayClient client;
    private List<ExportFiles> exports;
    private long testStart;
    /** Why this machine cannot run the containers, or null. */
    private String unusable;

    @BeforeAll
    void buildTheImageAndStartAClusterOfContainersLikeTheManifests() throws IOException
    {
        testStart = System.nanoTime();
        podman = new Podman(RUN.directory().resolve("podman"));
        // the base's chroot is made outside the run folder, which QaRun deletes with a plain file walk
        final ContainerImages images = new ContainerImages(podman,
            RUN.directory().getParent().resolveSibling("container-base"));
        unusable = podman.whyUnusable().or(images::whyBaseCannotBeBuilt).orElse(null);
        if (unusable != null)
        {
            failInCi();
            return;
        }
        removeLeftovers();
        // should this JVM be ended before @AfterAll (a surefire timeout, Ctrl-C), its containers go with it
        Runtime.getRuntime().addShutdownHook(removal);

        manifests = Manifests.loadAll();
        dockerfile = Dockerfile.load();
        brokers = Manifests.only(manifests, StatefulSet.class);
        brokerContainer = brokers.getSpec().getTemplate().getSpec().getContainers().get(0);
        final Deployment gateway = Manifests.only(manifests, Deployment.class);
        gatewayPod = gateway.getSpec().getTemplate().getSpec();
        gatewayContainer = gatewayPod.getContainers().get(0);
        image = brokerContainer.getImage();
        assertThat(gatewayContainer.getImage()).isEqualTo(image);

        final Optional<String> baseTimings = ContainerBaseAhead.ensureBase(images);
        final Path repository = SluiceCluster.jar().getParent().getParent().getParent();
        final double build = images.buildSluice(repository, image);
        // the base exists now: a container that cannot start here is a machine problem, not a Sluice one
        final Podman.Result probe = podman.podman(PODMAN_CALL, "run", "--rm", "--pull=never", "--network=host",
            ContainerImages.BASE_IMAGE, "true");
        if (!probe.ok())
        {
            unusable = "podman cannot run a container here: " + Podman.firstLines(probe.err());
            failInCi();
            return;
        }
        report("base image " + ContainerImages.BASE_IMAGE + ": " + baseTimings.orElse("in podman's storage already"));
        report(String.format("image %s built in %.1f s, %d MB", image, build, images.size(image) / 1_000_000));

        final int replicas = brokers.getSpec().getReplicas();
        brokerPorts = IntStream.range(0, replicas).mapToObj(i -> PortAllocator.freePortPair()).toList();
        brokerList = String.join(",", brokerPorts.stream().map(port -> "127.0.0.1:" + port).toList());
        clientPort = PortAllocator.freePort();
        managementPort = PortAllocator.freePort();
        client = new GatewayClient(URI.create("http://127.0.0.1:" + clientPort),
            URI.create("http://127.0.0.1:" + managementPort), token, Duration.ofSeconds(60));
        exports = new ArrayList<>();

        final Map<String, Long> started = new LinkedHashMap<>();
        for (int ordinal = 0; ordinal < replicas; ordinal++)
        {
            final Path data = Files.createDirectories(RUN.directory().resolve("broker-" + ordinal));
            exports.add(new ExportFiles(data.resolve("exports").resolve("file")));
            started.put(brokerName(ordinal), System.nanoTime());
            startBroker(ordinal, data);
        }
        started.put(gatewayName(), System.nanoTime());
        startGateway();

        for (int ordinal = 0; ordinal < replicas; ordinal++)
        {
            final int port = brokerPorts.get(ordinal);
            final String name = brokerName(ordinal);
            awaitContainer(name, "its command port " + port + " accepting (the manifest's tcpSocket probe)", () -> accepts(port));
            secondsToHealthy.put(name, (System.nanoTime() - started.get(name)) / 1e9);
        }
        awaitContainer(gatewayName(), READINESS + " UP (the manifest's readiness probe)", client::isReady);
        secondsToHealthy.put(gatewayName(), (System.nanoTime() - started.get(gatewayName())) / 1e9);
        report("start to healthy (s): " + secondsToHealthy);
    }

    /** Each test is reported skipped, with the reason, on a machine that cannot run containers. */
    @BeforeEach
    void skipWhenThisMachineCannotRunContainers()
    {
        Assumptions.assumeTrue(unusable == null, () -> "container cluster test skipped: " + unusable);
    }

    @AfterAll
    void removeEveryContainer()
    {
        if (podman == null)
        {
            return;
        }
        for (final String name : containers)
        {
            // the logs go to the run folder first: QaRun keeps it when a test failed
            final Podman.Result logs = podman.podman(PODMAN_CALL, "logs", name);
            try
            {
                Files.writeString(RUN.directory().resolve(name + ".log"), logs.out() + logs.err());
            }
            catch (final IOException ex)
            {
                // the removal below matters more than the log
            }
        }
        removeLeftovers();
        try
        {
            Runtime.getRuntime().removeShutdownHook(removal);
        }
        catch (final IllegalStateException | IllegalArgumentException ex)
        {
            // shutting down already, or never registered
        }
        if (testStart != 0)
        {
            report(String.format("whole class %.1f s", (System.nanoTime() - testStart) / 1e9));
        }
    }

    @Test
    @Order(1)
    void theContainersRunTheJvmAsPid1AsTheManifestsUserSizedByTheMemoryLimit()
    {
        final String name = gatewayName();
        final String process = podman.podman(PODMAN_CALL, "exec", name, "sh", "-c",
            "id -u; id -g; tr '\\0' ' ' < /proc/1/cmdline").checked().out();
        final List<String> lines = process.lines().toList();
        assertThat(Long.parseLong(lines.get(0))).as("uid").isEqualTo(gatewayPod.getSecurityContext().getRunAsUser());
        assertThat(Long.parseLong(lines.get(1))).as("gid").isEqualTo(gatewayPod.getSecurityContext().getRunAsGroup());
        assertThat(lines.get(2).strip()).as("PID 1 of " + name).isEqualTo("java -jar /opt/sluice/sluice.jar gateway");

        // a JVM started in the same container (same cgroup, same JAVA_TOOL_OPTIONS) sizes its heap like PID 1 did
        final String flags = podman.podman(PODMAN_CALL, "exec", name, "java", "-XX:+PrintFlagsFinal", "-version")
            .checked().out();
        final long maxHeap = flags.lines().filter(line -> line.contains(" MaxHeapSize ")).map(line -> line.trim().split("\\s+")[3])
            .map(Long::parseLong).findFirst().orElseThrow();
        final long limit = memoryLimit(gatewayContainer);
        assertThat((double)maxHeap / limit).as("max heap %d of the %d byte memory limit", maxHeap, limit)
            .isBetween(0.70, 0.76);
    }

    @Test
    @Order(2)
    void aRecordWrittenIsExported()
    {
        final WrittenRecord record = client.write("container-first", "{\"n\": 1}");
        awaitExported(List.of(record));
    }

    @Test
    @Order(3)
    void aPauseHoldsWhileABrokerContainerIsStoppedAndStartedAgain()
    {
        final ExportingControlAnswer pause = client.pause();
        assertThat(pause.status()).as("pause: %s", pause).isEqualTo(200);
        awaitEveryPair("PAUSED");
        final Map<Path, String> before = snapshot();
        final List<WrittenRecord> written = new ArrayList<>(write("during-pause", 20));

        // stop the broker leading the first record's partition: SIGTERM to the JVM as PID 1, within the grace
        final int partition = written.get(0).partitionId();
        final int leader = client.exporting().leaderOf(partition).orElse(0);
        final String name = brokerName(leader);
        final long grace = brokers.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds();
        podman.podman(Duration.ofSeconds(grace + 30), "stop", "--time", Long.toString(grace), name).checked();
        assertThat(podman.podman(PODMAN_CALL, "inspect", "--format", "{{.State.ExitCode}}", name).checked().out().strip())
            .as("exit code of %s after podman stop: 143 is the JVM ending on SIGTERM, 137 a SIGKILL", name).isEqualTo("143");
        final long restart = System.nanoTime();
        podman.podman(PODMAN_CALL, "start", name).checked();
        awaitContainer(name, "its command port accepting after the restart", () -> accepts(brokerPorts.get(leader)));
        report(String.format("%s restarted to healthy in %.1f s", name, (System.nanoTime() - restart) / 1e9));

        awaitEveryPair("PAUSED");
        written.addAll(write("after-restart", 20));
        Await.quietPeriod("paused across the restart: nothing may be exported", QUIET_PERIOD);
        assertEveryPair("PAUSED");
        assertThat(snapshot()).as("export files while paused, across the restart of %s", name)
            .containsExactlyInAnyOrderEntriesOf(before);

        final ExportingControlAnswer resume = client.resume();
        assertThat(resume.status()).as("resume: %s", resume).isEqualTo(200);
        awaitExported(written);
    }

    /**
     * The backup CronJob's container in the image ({@code admin backup take --wait} through the image's entrypoint),
     * with its args, env, user and memory limit, against the gateway container: it ends 0 once the backup is
     * COMPLETED, and exporting was never paused. The manifests leave the store to the operator (one every pod shares,
     * such as an S3 bucket); the containers here share a host directory as the filesystem store
     * ({@link #BACKUP_STORE_IN_CONTAINERS}).
     */
    @Test
    @Order(4)
    void theBackupCronJobInTheImageTakesABackupInOneCallAndEndsWhenItCompleted() throws Exception
    {
        final PodSpec pod = Manifests.only(manifests, CronJob.class).getSpec().getJobTemplate().getSpec().getTemplate().getSpec();
        final Container backup = pod.getContainers().get(0);
        final Path folder = Files.createDirectories(RUN.directory().resolve("backup"));
        final List<WrittenRecord> before = write("before-backup", 20);

        final List<String> runArgs = new ArrayList<>(List.of("run", "--rm", "--pull=never", "--network=host",
            "--label", LABEL, "--name", "sluice-qa-backup", "--user", user(pod.getSecurityContext().getRunAsUser(),
                pod.getSecurityContext().getRunAsGroup()),
            "--memory", podmanMemory(memoryLimit(backup)), "--cap-drop=ALL", "--security-opt=no-new-privileges"));
        for (final EnvVar variable : backup.getEnv())
        {
            final String value = variable.getValueFrom() != null && variable.getValueFrom().getSecretKeyRef() != null
                ? token : variable.getValue();
            assertThat(value).as("env " + variable.getName() + " of the backup container").isNotNull();
            runArgs.addAll(List.of("-e", variable.getName() + "=" + value));
        }
        if (backup.getCommand() != null && !backup.getCommand().isEmpty())
        {
            runArgs.addAll(List.of("--entrypoint", toJson(backup.getCommand())));
        }
        runArgs.add(image);
        for (final String arg : backup.getArgs())
        {
            // the gateway Service's management URL is the gateway container's management port on loopback
            runArgs.add(arg.matches("https?://sluice-gateway:\\d+") ? "http://127.0.0.1:" + managementPort : arg);
        }
        final Path out = folder.resolve("job.out");
        final Path err = folder.resolve("job.err");
        final Process job = new ProcessBuilder(podmanCommand(runArgs)).redirectOutput(out.toFile())
            .redirectError(err.toFile()).start();
        try
        {
            assertThat(job.waitFor(180, TimeUnit.SECONDS)).as("the backup container ends").isTrue();
            assertThat(job.exitValue()).as("exit; stdout: %s stderr: %s", read(out), read(err)).isZero();
        }
        finally
        {
            job.destroyForcibly();
        }
        final Matcher taken = Pattern.compile("backup (\\d+) IN_PROGRESS").matcher(read(out));
        assertThat(taken.find()).as(read(out)).isTrue();
        assertThat(read(out)).contains("backup " + taken.group(1) + " COMPLETED");
        assertThat(client.get("/actuator/backups/" + taken.group(1)).json().path("state").asString()).isEqualTo("COMPLETED");
        awaitEveryPair("EXPORTING");
        awaitExported(before);
    }

    // ---------------------------------------------------------------- containers as the manifests make them

    private void startBroker(final int ordinal, final Path data)
    {
        final Map<String, String> env = configMapEnv(brokerContainer);
        env.put("SLUICE_CLUSTER_BROKERS", brokerList);
        for (final EnvVar variable : brokerContainer.getEnv())
        {
            if (variable.getValueFrom() != null && variable.getValueFrom().getFieldRef() != null)
            {
                assertThat(variable.getValueFrom().getFieldRef().getFieldPath()).as("env " + variable.getName())
                    .isEqualTo("metadata.labels['apps.kubernetes.io/pod-index']");
                env.put(variable.getName(), Integer.toString(ordinal));
            }
            else
            {
                assertThat(variable.getValueFrom()).as("env " + variable.getName() + " of the broker").isNull();
                env.put(variable.getName(), variable.getValue());
            }
        }
        final PodSpec pod = brokers.getSpec().getTemplate().getSpec();
        final VolumeMount dataMount = brokerContainer.getVolumeMounts().get(0);
        final List<String> options = new ArrayList<>(List.of(
            "--user", user(pod.getSecurityContext().getRunAsUser(), pod.getSecurityContext().getRunAsGroup()),
            "--stop-timeout", Long.toString(pod.getTerminationGracePeriodSeconds()),
            "-v", data + ":" + dataMount.getMountPath() + ":U"));
        options.addAll(secretMounts(brokerContainer, pod));
        options.addAll(backupStore(env));
        start(brokerName(ordinal), brokerContainer, env, options);
    }

    private void startGateway()
    {
        final Map<String, String> env = configMapEnv(gatewayContainer);
        env.put("SLUICE_CLUSTER_BROKERS", brokerList);
        for (final EnvVar variable : gatewayContainer.getEnv())
        {
            if (variable.getValueFrom() != null)
            {
                assertThat(variable.getValueFrom().getSecretKeyRef()).as("env " + variable.getName() + " of the gateway").isNotNull();
                env.put(variable.getName(), token);
            }
            else
            {
                // a pod's own address here is the host's loopback: servers in tests listen on 127.0.0.1 only
                env.put(variable.getName(), variable.getValue().equals("0.0.0.0") ? "127.0.0.1" : variable.getValue());
            }
        }
        env.put("SERVER_ADDRESS", "127.0.0.1");
        env.put("SERVER_PORT", Integer.toString(clientPort));
        env.put("MANAGEMENT_SERVER_PORT", Integer.toString(managementPort));
        final List<String> options = new ArrayList<>(List.of(
            "--user", user(gatewayPod.getSecurityContext().getRunAsUser(), gatewayPod.getSecurityContext().getRunAsGroup()),
            "--stop-timeout", Long.toString(gatewayPod.getTerminationGracePeriodSeconds())));
        options.addAll(secretMounts(gatewayContainer, gatewayPod));
        options.addAll(backupStore(env));
        start(gatewayName(), gatewayContainer, env, options);
    }

    /**
     * Backups need a store that brokers and gateways share; the manifests leave it to the operator (an S3 bucket, say:
     * each pod's own volume is none). Here every container mounts one host directory as the filesystem store.
     */
    private List<String> backupStore(final Map<String, String> env)
    {
        final Path local = RUN.directory().resolve("backups");
        try
        {
            Files.createDirectories(local);
            Files.setPosixFilePermissions(local, PosixFilePermissions.fromString("rwxrwxrwx"));
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
        env.put("SLUICE_BACKUP_FILESYSTEM_PATH", BACKUP_STORE_IN_CONTAINERS);
        return List.of("-v", local + ":" + BACKUP_STORE_IN_CONTAINERS);
    }

    /**
     * The pod's Secret volumes where the manifest mounts them. The cluster TLS Secrets hold {@code tls.crt},
     * {@code tls.key} and {@code ca.crt} (the files the ConfigMap names): here a certificate per Secret from one CA
     * made for this run, valid for 127.0.0.1 (the containers share the host's loopback).
     */
    private List<String> secretMounts(final Container container, final PodSpec pod)
    {
        final List<String> options = new ArrayList<>();
        for (final VolumeMount mount : container.getVolumeMounts())
        {
            final Volume volume = pod.getVolumes() == null ? null : pod.getVolumes().stream()
                .filter(candidate -> candidate.getName().equals(mount.getName())).findFirst().orElse(null);
            if (volume == null || volume.getSecret() == null)
            {
                continue;
            }
            final String secret = volume.getSecret().getSecretName();
            final Path local = RUN.directory().resolve("secrets").resolve(secret);
            try
            {
                if (!Files.exists(local.resolve("tls.crt")))
                {
                    if (authority == null)
                    {
                        authority = TestCertificates.authority(RUN.directory().resolve("ca"), "qa-containers");
                    }
                    final TlsFiles issued = authority.issue(secret);
                    Files.createDirectories(local);
                    Files.copy(issued.certificate(), local.resolve("tls.crt"));
                    Files.copy(issued.privateKey(), local.resolve("tls.key"));
                    Files.copy(issued.trustedCertificates(), local.resolve("ca.crt"));
                }
            }
            catch (final IOException e)
            {
                throw new UncheckedIOException(e);
            }
            // U: owned by the container's user, as a Secret's files are readable by the pod's fsGroup
            options.addAll(List.of("-v", local + ":" + mount.getMountPath() + ":U"));
        }
        return options;
    }

    /** {@code podman run -d} of a manifest's container: its command (as the entrypoint), args, env and memory limit. */
    private void start(final String name, final Container container, final Map<String, String> env, final List<String> options)
    {
        final List<String> args = new ArrayList<>(List.of("run", "-d", "--pull=never", "--network=host", "--name", name,
            "--label", LABEL, "--memory", podmanMemory(memoryLimit(container)), "--cap-drop=ALL",
            "--security-opt=no-new-privileges"));
        args.addAll(options);
        env.forEach((key, value) -> args.addAll(List.of("-e", key + "=" + value)));
        if (container.getCommand() != null && !container.getCommand().isEmpty())
        {
            args.addAll(List.of("--entrypoint", toJson(container.getCommand())));
        }
        args.add(container.getImage());
        if (container.getArgs() != null)
        {
            args.addAll(container.getArgs());
        }
        containers.add(name);
        podman.podman(PODMAN_CALL, args).checked();
    }

    private Map<String, String> configMapEnv(final Container container)
    {
        final Map<String, String> env = new LinkedHashMap<>();
        if (container.getEnvFrom() != null)
        {
            container.getEnvFrom().stream().filter(source -> source.getConfigMapRef() != null).forEach(source ->
                env.putAll(Manifests.named(manifests, ConfigMap.class, source.getConfigMapRef().getName()).getData()));
        }
        return env;
    }

    /** Waits for a container's probe; fails at once, with its log, when the container ended. */
    private void awaitContainer(final String name, final String what, final BooleanSupplier probe)
    {
        Await.until(name + ": " + what, STARTUP, () ->
        {
            if (probe.getAsBoolean())
            {
                return true;
            }
            final String state = podman.podman(PODMAN_CALL, "inspect", "--format", "{{.State.Status}}", name).out().strip();
            if (!state.equals("running"))
            {
                final Podman.Result logs = podman.podman(PODMAN_CALL, "logs", "--tail", "40", name);
                fail(name + " is " + state + " instead of running; its log:\n" + logs.out() + logs.err());
            }
            return false;
        });
    }

    private void removeLeftovers()
    {
        final Podman.Result names = podman.podman(PODMAN_CALL, "ps", "-a", "--filter", "label=" + LABEL, "--format", "{{.Names}}");
        final List<String> leftovers = names.out().lines().filter(line -> !line.isBlank()).toList();
        if (!leftovers.isEmpty())
        {
            final List<String> args = new ArrayList<>(List.of("rm", "--force", "--time", "0"));
            args.addAll(leftovers);
            podman.podman(PODMAN_CALL, args).checked();
        }
    }

    private List<String> podmanCommand(final List<String> args)
    {
        final List<String> command = new ArrayList<>(List.of("env", "CONTAINERS_CONF=" + RUN.directory().resolve("podman/containers.conf"), Podman.PROGRAM));
        command.addAll(args);
        return command;
    }

    // ---------------------------------------------------------------- records and exports

    private List<WrittenRecord> write(final String prefix, final int count)
    {
        return IntStream.range(0, count).mapToObj(i -> client.write(prefix + "-" + i, "{\"i\": " + i + "}")).toList();
    }

    /** Every record in some broker's export file of its partition (each broker has its own data volume). */
    private void awaitExported(final List<WrittenRecord> records)
    {
        Await.until(records.size() + " records exported", SluiceCluster.FAILOVER_TIMEOUT, () -> records.stream().allMatch(record ->
            exports.stream().anyMatch(files -> files.records(record.partitionId()).stream()
                .anyMatch(exported -> exported.position() == record.position() && record.key().equals(exported.key())))));
    }

    /** The export file of every partition on every broker's volume (empty when not written yet). */
    private Map<Path, String> snapshot()
    {
        final Map<Path, String> files = new HashMap<>();
        final int partitions = Integer.parseInt(configMapEnv(brokerContainer).get("SLUICE_CLUSTER_PARTITIONS"));
        for (final ExportFiles broker : exports)
        {
            for (int partition = 1; partition <= partitions; partition++)
            {
                files.put(broker.file(partition), new String(broker.bytes(partition), StandardCharsets.UTF_8));
            }
        }
        return files;
    }

    /**
     * The gateway's status view polls the brokers, so a state shows a moment after the call that set it was
     * answered (as qa's Exporting helper waits for it too); a broker just restarted shows UNKNOWN until it answers.
     */
    private void awaitEveryPair(final String state)
    {
        Await.until("every pair " + state, STATE_TIMEOUT, () ->
        {
            try
            {
                assertEveryPair(state);
                return true;
            }
            catch (final AssertionError notYet)
            {
                throw new IllegalStateException(notYet.getMessage(), notYet);
            }
        });
    }

    private void assertEveryPair(final String state)
    {
        final ExportingStatus status = client.exporting();
        assertThat(status.targets()).as("pairs of %s", status).isNotEmpty()
            .allSatisfy(pair -> assertThat(pair.state()).as("%s", pair).isEqualTo(state));
        assertThat(status.state()).isEqualTo(state);
    }

    // ---------------------------------------------------------------- small things

    private String brokerName(final int ordinal)
    {
        return "sluice-qa-" + brokers.getMetadata().getName() + "-" + ordinal;
    }

    private String gatewayName()
    {
        return "sluice-qa-gateway";
    }

    /** In CI, where .ci/run installs podman, a machine that cannot run containers is a failure, never a skip. */
    private void failInCi()
    {
        report("cannot run containers: " + unusable);
        if ("true".equals(System.getenv("CI")))
        {
            fail("CI installs podman (.ci/run), yet this machine cannot run the container cluster: " + unusable);
        }
    }

    private static boolean accepts(final int port)
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            return true;
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    private static long memoryLimit(final Container container)
    {
        final Quantity memory = container.getResources().getLimits().get("memory");
        assertThat(memory).as("memory limit of container " + container.getName()).isNotNull();
        return Quantity.getAmountInBytes(memory).longValueExact();
    }

    private static String podmanMemory(final long bytes)
    {
        return bytes + "b";
    }

    private static String user(final Long uid, final Long gid)
    {
        assertThat(uid).as("runAsUser").isNotNull();
        return uid + (gid == null ? "" : ":" + gid);
    }

    private static String toJson(final List<String> words)
    {
        final StringBuilder json = new StringBuilder("[");
        for (int i = 0; i < words.size(); i++)
        {
            json.append(i == 0 ? "" : ",").append('"').append(words.get(i).replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
        }
        return json.append(']').toString();
    }

    private static String read(final Path file)
    {
        try
        {
            return Files.exists(file) ? Files.readString(file) : "";
        }
        catch (final IOException ex)
        {
            return "? " + ex;
        }
    }

    private static void report(final String line)
    {
        System.out.println("[container-qa] " + line);
    }
}
