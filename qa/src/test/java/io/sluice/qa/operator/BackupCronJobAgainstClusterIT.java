package io.sluice.qa.operator;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.sluice.kubernetes.Manifests;
import io.sluice.qa.Exporting;
import io.sluice.qa.Records;
import io.sluice.qa.SharedCluster;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 7: the backup CronJob of {@code dist/kubernetes/backup-cronjob.yaml}, run the way its pod runs it, against a
 * cluster of separate JVMs shaped like the manifests (the StatefulSet's replicas, sluice-config's partitions and
 * replication factor), so the CronJob's command line cannot drift from the hook's and the CLI's real flags.
 * <p>
 * The container's command, args and env are taken verbatim; only what a pod gets from its image and from Kubernetes
 * is translated: the image's install directory (the hook and {@code sluice.jar}), the ConfigMap volume, the gateway
 * Service's URL, the token from the Secret, and PATH. {@code kubectl} is the only stand-in: it records its calls,
 * answers {@code kubectl get} with the claims the StatefulSet controller would have made, and holds
 * {@code kubectl wait} until the test says the snapshots are ready; hook, CLI, gateway and brokers are real.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Execution(ExecutionMode.SAME_THREAD)
class BackupCronJobAgainstClusterIT
{
    /** Where the image has the hook and the CLI, relative to its install directory (see backup-hook.sh). */
    private static final String HOOK_IN_IMAGE = "bin/backup-hook.sh";
    private static final String JAR_IN_IMAGE = "sluice.jar";
    /** The gateway's {@code sluice.management.token} as an environment variable (relaxed binding). */
    private static final String GATEWAY_TOKEN_ENV = "SLUICE_MANAGEMENT_TOKEN";
    /** The name of the gateway's container port of the management API (CONTRACT §3). */
    private static final String MANAGEMENT_PORT_NAME = "management";
    private static final Pattern URL = Pattern.compile("(https?)://([^/:]+)(?::(\\d+))?(/.*)?");
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(4);
    private static final Duration QUIET_PERIOD = Duration.ofSeconds(2);
    /** How long the kubectl stand-in holds {@code kubectl wait} at most, if the test never says finish. */
    private static final Duration KUBECTL_WAIT_LIMIT = SluiceCluster.scaled(Duration.ofSeconds(240));
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    @RegisterExtension
    static final QaRun RUN = new QaRun();
    /** The manifests' shape is the default layout today: then the shared cluster serves, with its token. */
    @RegisterExtension
    static final SharedCluster SHARED = new SharedCluster();

    private String token;
    private List<Manifests.Document> manifests;
    private StatefulSet brokers;
    private Container backup;
    private PodSpec backupPod;
    private SluiceCluster cluster;
    private Process hook;

    @BeforeAll
    void startAClusterShapedLikeTheManifests() throws IOException
    {
        manifests = Manifests.loadAll();
        final CronJob cronJob = Manifests.only(manifests, CronJob.class);
        backupPod = cronJob.getSpec().getJobTemplate().getSpec().getTemplate().getSpec();
        backup = backupPod.getContainers().get(0);
        brokers = Manifests.only(manifests, StatefulSet.class);
        final Map<String, String> settings = configMapEnv(brokers.getSpec().getTemplate().getSpec().getContainers().get(0));
        final int replicas = brokers.getSpec().getReplicas();
        final int partitions = Integer.parseInt(required(settings, "SLUICE_CLUSTER_PARTITIONS"));
        final int replicationFactor = Integer.parseInt(required(settings, "SLUICE_CLUSTER_REPLICATIONFACTOR"));

        final SluiceCluster shared = SHARED.cluster();
        if (shared.brokerCount() == replicas && shared.partitionCount() == partitions &&
            shared.replicasOf(1).size() == replicationFactor)
        {
            cluster = shared;
        }
        else
        {
            final String ownToken = UUID.randomUUID().toString();
            cluster = RUN.cluster("cluster", builder -> builder.brokers(replicas).partitions(partitions)
                .replicationFactor(replicationFactor).token(ownToken).requestTimeout(REQUEST_TIMEOUT));
            cluster.start();
            cluster.awaitReady();
        }
        token = cluster.token();
        Exporting.everyBrokerUp(cluster);
        Exporting.assertEveryPair(cluster, "EXPORTING");
    }

    /** A failed test may leave the hook, its backup or the kubectl stand-in running: end them. */
    @AfterEach
    void endLeftoverProcesses()
    {
        if (hook != null)
        {
            hook.descendants().forEach(ProcessHandle::destroyForcibly);
            hook.destroyForcibly();
        }
    }

    @Test
    void theCronJobsCommandLinePausesForTheBackupAndResumes() throws Exception
    {
        final Path folder = Files.createDirectories(RUN.directory().resolve("cronjob"));
        final Path kubectl = Files.createDirectories(folder.resolve("kubectl"));
        final Path calls = Files.createDirectories(kubectl.resolve("calls"));
        final Path started = kubectl.resolve("started");
        final Path finish = kubectl.resolve("finish");
        final Path hookErr = folder.resolve("hook.err");
        Records.awaitExported(cluster, Records.write(cluster, "before-backup", 60));

        final Pod pod = new Pod(folder);
        pod.installKubectlStandIn(calls, started, finish, brokerClaims());
        final List<String> commandLine = new ArrayList<>(backup.getCommand());
        commandLine.addAll(backup.getArgs() == null ? List.of() : backup.getArgs());
        hook = pod.run(commandLine, folder.resolve("hook.out"), hookErr);

        // kubectl wait blocks: the snapshots are being taken, and exporting must stay paused meanwhile.
        Hooks.awaitFile(hook, started, hookErr);
        final boolean soft = commandLine.contains("--soft");
        Exporting.assertEveryPair(cluster, soft ? "SOFT_PAUSED" : "PAUSED");
        final Map<Integer, byte[]> exportedBefore = Records.snapshot(cluster);
        final List<WrittenRecord> duringBackup = Records.write(cluster, "during-backup", 200);
        Await.quietPeriod("the backup runs; nothing may be exported meanwhile", QUIET_PERIOD);
        if (!soft)
        {
            Records.assertUnchanged(cluster, exportedBefore, "while the CronJob's backup ran");
        }
        assertThat(hook.isAlive()).as("the hook waits for its backup; stderr: %s", Hooks.read(hookErr)).isTrue();
        Files.createFile(finish);

        assertThat(Hooks.awaitExit(hook, hookErr)).as("hook exit; stderr: %s", Hooks.read(hookErr)).isZero();
        Exporting.assertEveryPair(cluster, "EXPORTING");
        Records.awaitExported(cluster, duringBackup);
        assertOneSnapshotPerBrokerVolumeThenAWaitForThem(readCalls(calls));
    }

    private void assertOneSnapshotPerBrokerVolumeThenAWaitForThem(final List<KubectlCall> calls)
    {
        final List<KubectlCall> applies = calls.stream().filter(call -> call.verb().equals("apply")).toList();
        final List<KubectlCall> waits = calls.stream().filter(call -> call.verb().equals("wait")).toList();
        assertThat(calls).as("kubectl calls").hasSize(1 + applies.size() + waits.size());
        assertThat(waits).as("kubectl wait calls among %s", calls).hasSize(1);
        assertThat(calls.get(calls.size() - 1)).as("the last kubectl call").isEqualTo(waits.get(0));

        final String selector = waits.get(0).option("-l", "--selector");
        assertThat(selector).as("label selector of %s", waits.get(0)).matches("[^=,!]+=[^=,]+");
        final String labelKey = selector.substring(0, selector.indexOf('='));
        final String labelValue = selector.substring(selector.indexOf('=') + 1);
        assertThat(waits.get(0).args()).as("what kubectl wait waits for").anyMatch(arg -> arg.startsWith("volumesnapshot"));

        final List<String> expectedClaims = brokerClaims();
        final List<KubectlCall> gets = calls.stream().filter(call -> call.verb().equals("get")).toList();
        assertThat(gets).as("kubectl get calls among %s", calls).hasSize(1);
        assertThat(calls.get(0)).as("the first kubectl call").isEqualTo(gets.get(0));
        // Every claim the StatefulSet controller makes carries the StatefulSet's selector labels: select by those.
        final Map<String, String> claimLabels = brokers.getSpec().getSelector().getMatchLabels();
        for (final String term : gets.get(0).option("-l", "--selector").split(","))
        {
            assertThat(term).as("a term of the selector of %s", gets.get(0)).matches("[^=!]+=[^=!]+");
            assertThat(claimLabels).as("the StatefulSet's selector labels, for %s", gets.get(0))
                .containsEntry(term.substring(0, term.indexOf('=')), term.substring(term.indexOf('=') + 1));
        }

        final List<String> claims = new ArrayList<>();
        for (final KubectlCall apply : applies)
        {
            assertThat(apply.args()).as("a kubectl apply of the manifest on stdin").containsExactly("apply", "-f", "-");
            final GenericKubernetesResource snapshot =
                SERIALIZATION.unmarshal(apply.stdin(), GenericKubernetesResource.class);
            assertThat(snapshot.getApiVersion()).as(apply.stdin()).startsWith("snapshot.storage.k8s.io/");
            assertThat(snapshot.getKind()).as(apply.stdin()).isEqualTo("VolumeSnapshot");
            assertThat(snapshot.getMetadata().getLabels()).as("labels of %s", apply.stdin())
                .containsEntry(labelKey, labelValue);
            assertThat((String) snapshot.get("spec", "volumeSnapshotClassName")).as(apply.stdin())
                .isEqualTo(envValue("SLUICE_SNAPSHOT_CLASS"));
            claims.add(snapshot.get("spec", "source", "persistentVolumeClaimName"));
        }
        assertThat(claims).as("the PVCs snapshotted (StatefulSet %s)", brokers.getMetadata().getName())
            .containsExactlyInAnyOrderElementsOf(expectedClaims);
    }

    /** The PVCs the StatefulSet controller makes for the brokers: {@code <claim template>-<StatefulSet>-<ordinal>}. */
    private List<String> brokerClaims()
    {
        final String claimTemplate = brokers.getSpec().getVolumeClaimTemplates().stream()
            .map(claim -> claim.getMetadata().getName()).reduce((a, b) ->
            {
                throw new AssertionError("the StatefulSet has several volume claim templates: " + a + ", " + b);
            }).orElseThrow(() -> new AssertionError("the StatefulSet has no volume claim template"));
        return IntStream.range(0, brokers.getSpec().getReplicas())
            .mapToObj(ordinal -> claimTemplate + "-" + brokers.getMetadata().getName() + "-" + ordinal).toList();
    }

    /**
     * What a pod of the backup CronJob gets from its image and from Kubernetes, as local files and addresses: the
     * image's install directory, the container's volumes, its environment, and PATH with the kubectl stand-in.
     */
    private final class Pod
    {
        private final Path folder;
        /** Directory in the pod (the image's install directory, each volume's mount path) to local directory. */
        private final Map<String, Path> mounts = new LinkedHashMap<>();
        private final String imageDirectory;
        private final Path localImage;
        private Path pathDirectory;

        Pod(final Path folder) throws IOException
        {
            this.folder = folder;
            final String hookInPod = Stream.concat(backup.getCommand().stream(),
                    backup.getArgs() == null ? Stream.empty() : backup.getArgs().stream())
                .filter(arg -> arg.endsWith("/" + HOOK_IN_IMAGE)).findFirst()
                .orElseThrow(() -> new AssertionError("the backup container runs no " + HOOK_IN_IMAGE + " of the image: "
                    + backup.getCommand() + " " + backup.getArgs()));
            imageDirectory = hookInPod.substring(0, hookInPod.length() - HOOK_IN_IMAGE.length() - 1);
            localImage = Files.createDirectories(folder.resolve("image"));
            final Path hookScript = Manifests.DIRECTORY.resolveSibling("bin").resolve("backup-hook.sh");
            Files.createDirectories(localImage.resolve(HOOK_IN_IMAGE).getParent());
            Files.copy(hookScript, localImage.resolve(HOOK_IN_IMAGE), StandardCopyOption.COPY_ATTRIBUTES);
            Files.createSymbolicLink(localImage.resolve(JAR_IN_IMAGE), SluiceCluster.jar().toAbsolutePath());
            mounts.put(imageDirectory, localImage);
            final List<VolumeMount> volumeMounts = backup.getVolumeMounts() == null ? List.of() : backup.getVolumeMounts();
            for (final VolumeMount mount : volumeMounts)
            {
                mounts.put(mount.getMountPath(), mountVolume(mount));
            }
        }

        /** A ConfigMap volume as the kubelet makes it (one file a key, with the volume's defaultMode), or an empty emptyDir. */
        private Path mountVolume(final VolumeMount mount) throws IOException
        {
            if (mount.getSubPath() != null || mount.getSubPathExpr() != null)
            {
                throw new AssertionError("volume mount " + mount.getName()
                    + " uses a subPath, which this test does not lay out");
            }
            final Volume volume = backupPod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName()))
                .findFirst().orElseThrow(() -> new AssertionError("the backup pod mounts volume " + mount.getName()
                    + ", which it does not have"));
            if (volume.getEmptyDir() != null)
            {
                // e.g. the tools volume the init container copies kubectl into; the kubectl stand-in is on PATH instead
                return Files.createDirectories(folder.resolve("volumes").resolve(volume.getName()));
            }
            if (volume.getConfigMap() == null || volume.getConfigMap().getItems() != null
                && !volume.getConfigMap().getItems().isEmpty())
            {
                throw new AssertionError("volume " + volume.getName() + " is not a plain ConfigMap volume; this test can only "
                    + "lay out those: " + volume);
            }
            final ConfigMap configMap = Manifests.named(manifests, ConfigMap.class, volume.getConfigMap().getName());
            final Path directory = Files.createDirectories(folder.resolve("volumes").resolve(volume.getName()));
            final Integer mode = volume.getConfigMap().getDefaultMode();
            final Set<PosixFilePermission> permissions = permissions(mode == null ? 0644 : mode);
            for (final Map.Entry<String, String> entry : configMap.getData().entrySet())
            {
                final Path file = directory.resolve(entry.getKey());
                Files.writeString(file, entry.getValue());
                Files.setPosixFilePermissions(file, permissions);
            }
            return directory;
        }

        /**
         * The only stand-in: kubectl records each call, answers {@code kubectl get} with {@code claims} (as
         * {@code -o name} prints them), and {@code kubectl wait} holds until the test says finish.
         */
        void installKubectlStandIn(final Path calls, final Path started, final Path finish, final List<String> claims)
            throws IOException
        {
            final Path claimNames = folder.resolve("kubectl-get-claims.txt");
            Files.write(claimNames, claims.stream().map(claim -> "persistentvolumeclaim/" + claim).toList());
            for (final Path path : List.of(calls, started, finish, claimNames))
            {
                assertThat(path.toString()).as("a path the stand-in can quote").doesNotContain("'");
            }
            pathDirectory = Files.createDirectories(folder.resolve("path"));
            final long rounds = KUBECTL_WAIT_LIMIT.toMillis() / 100;
            final String script = """
                #!/bin/sh
                # kubectl stand-in of BackupCronJobAgainstClusterIT: records each call (its arguments, one a line, and
                # its stdin) in a numbered folder; `kubectl get` prints the claims the StatefulSet would have made;
                # `kubectl wait` tells the test it started and holds until the test creates the finish file (at most
                # %d rounds of 0.1 s).
                n=0
                while ! mkdir '%s'/"$n" 2>/dev/null; do n=$((n + 1)); done
                for arg in "$@"; do printf '%%s\\n' "$arg"; done > '%s'/"$n"/args
                cat > '%s'/"$n"/stdin
                if [ "${1:-}" = wait ]; then
                  touch '%s'
                  i=0
                  while [ ! -e '%s' ]; do
                    i=$((i + 1))
                    if [ "$i" -gt %d ]; then echo "kubectl stand-in: the test never said finish" >&2; exit 1; fi
                    sleep 0.1
                  done
                  echo "kubectl stand-in: condition met"
                elif [ "${1:-}" = get ]; then
                  cat '%s'
                else
                  echo "kubectl stand-in: $1 recorded"
                fi
                """.formatted(rounds, calls, calls, calls, started, finish, rounds, claimNames);
            final Path kubectl = pathDirectory.resolve("kubectl");
            Files.writeString(kubectl, script);
            Files.setPosixFilePermissions(kubectl, permissions(0755));
        }

        /** Starts the command line, translated, with the container's env, as the kubelet would: stdin empty. */
        Process run(final List<String> commandLine, final Path out, final Path err) throws IOException
        {
            final List<String> command = commandLine.stream().map(arg -> translate("the command line", arg)).toList();
            final Map<String, String> environment = new LinkedHashMap<>();
            environment.put("PATH", String.join(File.pathSeparator, pathDirectory.toString(),
                Path.of(System.getProperty("java.home"), "bin").toString(), "/usr/bin", "/bin"));
            environment.put("HOME", Files.createDirectories(folder.resolve("home")).toString());
            environment.putAll(containerEnvironment());
            final Path workingDirectory = backup.getWorkingDir() != null
                ? Path.of(translate("workingDir", backup.getWorkingDir()))
                : Files.createDirectories(folder.resolve("workdir"));
            Files.write(folder.resolve("pod-command.txt"), command);
            final ProcessBuilder builder = new ProcessBuilder(command)
                .directory(workingDirectory.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(out.toFile())
                .redirectError(err.toFile());
            builder.environment().clear();
            builder.environment().putAll(environment);
            return builder.start();
        }

        /** The container's env: values translated, the Secret the gateway's token comes from replaced by the token. */
        private Map<String, String> containerEnvironment()
        {
            if (backup.getEnvFrom() != null && !backup.getEnvFrom().isEmpty())
            {
                throw new AssertionError("the backup container uses envFrom, which this test does not translate: "
                    + backup.getEnvFrom());
            }
            final Map<String, String> environment = new LinkedHashMap<>();
            for (final EnvVar variable : backup.getEnv() == null ? List.<EnvVar>of() : backup.getEnv())
            {
                final String where = "env " + variable.getName();
                if (variable.getValueFrom() == null)
                {
                    environment.put(variable.getName(),
                        translate(where, variable.getValue() == null ? "" : variable.getValue()));
                    continue;
                }
                final SecretKeySelector secret = variable.getValueFrom().getSecretKeyRef();
                final SecretKeySelector gatewayToken = gatewayTokenSecret();
                if (secret == null || !secret.getName().equals(gatewayToken.getName())
                    || !secret.getKey().equals(gatewayToken.getKey()))
                {
                    throw new AssertionError(where + " comes from " + variable.getValueFrom() + "; the test can only provide "
                        + "the gateway's token (Secret " + gatewayToken.getName() + ", key " + gatewayToken.getKey() + ")");
                }
                environment.put(variable.getName(), token);
            }
            return environment;
        }

        /** A value of the command line or env as the pod sees it, as this machine has it; fails if it cannot. */
        private String translate(final String where, final String value)
        {
            if (value.contains("$("))
            {
                throw new AssertionError(where + ": '" + value
                    + "' uses Kubernetes' $(VAR) expansion, which this test does not do");
            }
            final Matcher option = Pattern.compile("(--[\\w-]+=)(.+)").matcher(value);
            if (option.matches())
            {
                return option.group(1) + translate(where, option.group(2));
            }
            final Optional<Map.Entry<String, Path>> mount = mounts.entrySet().stream()
                .filter(entry -> value.equals(entry.getKey()) || value.startsWith(entry.getKey() + "/"))
                .max(Comparator.comparingInt(entry -> entry.getKey().length()));
            if (mount.isPresent())
            {
                final String inPod = mount.get().getKey();
                final Path local = value.equals(inPod) ? mount.get().getValue()
                    : mount.get().getValue().resolve(value.substring(inPod.length() + 1));
                if (!Files.exists(local))
                {
                    throw new AssertionError(where + ": " + value + " does not exist in the pod (" + inPod + " has only "
                        + list(mount.get().getValue()) + ")");
                }
                return local.toString();
            }
            final Matcher url = URL.matcher(value);
            if (url.matches())
            {
                return gatewayManagementUrl(where, url);
            }
            if (value.startsWith("/") && !Files.exists(Path.of(value)))
            {
                throw new AssertionError(where + ": " + value
                    + " is neither in the image, nor in a volume, nor on this machine");
            }
            return value;
        }

        /** {@code http://<Service>:<port>/path}: only the management port of the gateway's Service, as the cluster's. */
        private String gatewayManagementUrl(final String where, final Matcher url)
        {
            final String host = url.group(2);
            final int port = url.group(3) != null ? Integer.parseInt(url.group(3)) : url.group(1).equals("https") ? 443 : 80;
            final Service service = Manifests.named(manifests, Service.class, host.split("\\.")[0]);
            final ServicePort servicePort = service.getSpec().getPorts().stream().filter(p -> p.getPort() == port)
                .findFirst().orElseThrow(() -> new AssertionError(where + ": Service " + host + " has no port " + port));
            final IntOrString target =
                servicePort.getTargetPort() != null ? servicePort.getTargetPort() : new IntOrString(port);
            final Map<String, String> selector = service.getSpec().getSelector();
            final List<ContainerPort> targets = manifests.stream().map(Manifests.Document::resource)
                .filter(Deployment.class::isInstance).map(Deployment.class::cast)
                .filter(deployment -> deployment.getSpec().getTemplate().getMetadata().getLabels().entrySet()
                    .containsAll(selector.entrySet()))
                .flatMap(deployment -> deployment.getSpec().getTemplate().getSpec().getContainers().stream())
                .flatMap(container -> container.getPorts() == null ? Stream.empty() : container.getPorts().stream())
                .filter(containerPort -> target.getStrVal() != null ? target.getStrVal().equals(containerPort.getName())
                    : target.getIntVal().equals(containerPort.getContainerPort()))
                .toList();
            if (targets.isEmpty() || !targets.stream().allMatch(p -> MANAGEMENT_PORT_NAME.equals(p.getName())))
            {
                throw new AssertionError(where + ": " + url.group() + " is not the gateway's management API (Service " + host
                    + " port " + port + " goes to container ports " + targets + ")");
            }
            final String base = cluster.client().managementBase().toString().replaceAll("/+$", "");
            return base + (url.group(4) == null ? "" : url.group(4));
        }
    }

    /** The Secret and key the gateway's management token comes from. */
    private SecretKeySelector gatewayTokenSecret()
    {
        final List<SecretKeySelector> selectors = manifests.stream().map(Manifests.Document::resource)
            .filter(Deployment.class::isInstance).map(Deployment.class::cast)
            .flatMap(deployment -> deployment.getSpec().getTemplate().getSpec().getContainers().stream())
            .flatMap(container -> container.getEnv() == null ? Stream.empty() : container.getEnv().stream())
            .filter(variable -> variable.getName().equals(GATEWAY_TOKEN_ENV) && variable.getValueFrom() != null)
            .map(variable -> variable.getValueFrom().getSecretKeyRef())
            .distinct().toList();
        assertThat(selectors).as("where the gateway's %s comes from", GATEWAY_TOKEN_ENV).hasSize(1).doesNotContainNull();
        return selectors.get(0);
    }

    /** The variables a container gets from ConfigMaps through envFrom. */
    private Map<String, String> configMapEnv(final Container container)
    {
        final Map<String, String> variables = new HashMap<>();
        for (final EnvFromSource source : container.getEnvFrom() == null ? List.<EnvFromSource>of() : container.getEnvFrom())
        {
            if (source.getConfigMapRef() != null)
            {
                variables.putAll(Manifests.named(manifests, ConfigMap.class, source.getConfigMapRef().getName()).getData());
            }
        }
        return variables;
    }

    private String envValue(final String name)
    {
        return backup.getEnv().stream().filter(variable -> variable.getName().equals(name)).map(EnvVar::getValue)
            .findFirst().orElseThrow(() -> new AssertionError("the backup container has no env " + name));
    }

    private static String required(final Map<String, String> settings, final String name)
    {
        final String value = settings.get(name);
        if (value == null)
        {
            throw new AssertionError("the brokers' ConfigMap has no " + name);
        }
        return value;
    }

    private static List<String> list(final Path directory)
    {
        try (Stream<Path> files = Files.walk(directory))
        {
            return files.filter(path -> !path.equals(directory)).map(path -> directory.relativize(path).toString())
                .sorted().toList();
        }
        catch (final IOException ex)
        {
            return List.of("? " + ex);
        }
    }

    /** rwx bits of a Unix mode, e.g. 0555. */
    private static Set<PosixFilePermission> permissions(final int mode)
    {
        final Set<PosixFilePermission> permissions = EnumSet.noneOf(PosixFilePermission.class);
        final PosixFilePermission[] bits = PosixFilePermission.values(); // OWNER_READ .. OTHERS_EXECUTE
        for (int i = 0; i < bits.length; i++)
        {
            if ((mode & (1 << (bits.length - 1 - i))) != 0)
            {
                permissions.add(bits[i]);
            }
        }
        return permissions;
    }

    private static List<KubectlCall> readCalls(final Path calls) throws IOException
    {
        final List<KubectlCall> recorded = new ArrayList<>();
        for (int n = 0; Files.isDirectory(calls.resolve(Integer.toString(n))); n++)
        {
            final Path call = calls.resolve(Integer.toString(n));
            recorded.add(new KubectlCall(n, Files.readAllLines(call.resolve("args")), Hooks.read(call.resolve("stdin"))));
        }
        return recorded;
    }

    /** One call of the kubectl stand-in. */
    private record KubectlCall(int index, List<String> args, String stdin)
    {
        String verb()
        {
            return args.isEmpty() ? "" : args.get(0);
        }

        /** The value of an option given as {@code -l VALUE}, {@code --selector VALUE} or {@code --selector=VALUE}. */
        String option(final String... names)
        {
            for (int i = 0; i < args.size(); i++)
            {
                for (final String name : names)
                {
                    if (args.get(i).equals(name) && i + 1 < args.size())
                    {
                        return args.get(i + 1);
                    }
                    if (args.get(i).startsWith(name + "="))
                    {
                        return args.get(i).substring(name.length() + 1);
                    }
                }
            }
            throw new AssertionError("kubectl " + args + " has none of " + List.of(names));
        }

        @Override
        public String toString()
        {
            return "kubectl " + String.join(" ", args);
        }
    }
}
