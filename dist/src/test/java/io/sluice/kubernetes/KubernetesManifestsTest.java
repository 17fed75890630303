package io.sluice.kubernetes;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.sluice.cli.AdminCli;
import io.sluice.cli.CliConsole;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The manifests under dist/kubernetes: strictly valid for the fabric8 model, required fields present,
 * selectors matching, probes on the actuator health groups, the cluster settings consistent with the
 * StatefulSet, and the backup CronJob's command line accepted by the real hook and the real CLI.
 */
@Timeout(120)
class KubernetesManifestsTest
{
    private static final String SECRET_CREATED_BY_OPERATOR = "sluice-management";
    private static final int MANAGEMENT_PORT = 9600;
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private static List<Manifests.Document> documents;

    @BeforeAll
    static void load() throws IOException
    {
        documents = Manifests.loadAll();
    }

    @Test
    void everyDocumentParsesStrictlyIntoTheKubernetesModel() throws IOException
    {
        assertThat(Manifests.files()).extracting(path -> path.getFileName().toString())
            .contains("brokers.yaml", "gateway.yaml", "configmap.yaml", "backup-cronjob.yaml");
        assertThat(documents).extracting(document -> document.resource().getKind())
            .contains("Service", "StatefulSet", "Deployment", "PodDisruptionBudget", "ConfigMap", "CronJob");
        for (final Manifests.Document document : documents)
        {
            assertThat(document.resource().getApiVersion()).as(document.describe()).isNotBlank();
        }
    }

    @Test
    void aTypoAnywhereIsCaught()
    {
        final String typo = String.join("\n",
            "apiVersion: apps/v1",
            "kind: Deployment",
            "metadata: {name: x}",
            "spec:",
            "  selector: {matchLabels: {a: b}}",
            "  template:",
            "    metadata: {labels: {a: b}}",
            "    spec:",
            "      containers:",
            "        - name: c",
            "          image: i",
            "          readinessProbe: {httpGet: {path: /, port: 1, shceme: HTTP}}",
            "");
        assertThatThrownBy(() -> Manifests.load(Path.of("typo.yaml"), typo))
            .hasMessageContaining("spec.template.spec.containers[0].readinessProbe.httpGet.shceme");
        assertThatThrownBy(() -> Manifests.load(Path.of("kind.yaml"), "apiVersion: v1\nkind: Sevrice\nmetadata: {name: x}\n"))
            .hasMessageContaining("unknown kind");
    }

    @Test
    void everyContainerHasANameAndAnImage()
    {
        for (final Manifests.Document document : documents)
        {
            Manifests.podTemplate(document.resource()).ifPresent(template ->
            {
                assertThat(Manifests.containers(template)).as(document.describe()).isNotEmpty();
                for (final Container container : Manifests.containers(template))
                {
                    assertThat(container.getName()).as(document.describe()).isNotBlank();
                    assertThat(container.getImage()).as(document.describe() + " " + container.getName()).isNotBlank();
                }
            });
        }
    }

    @Test
    void selectorsMatchThePodTemplatesTheyManage()
    {
        final List<Map<String, String>> podLabels = new ArrayList<>();
        for (final Manifests.Document document : documents)
        {
            final HasMetadata resource = document.resource();
            Manifests.podTemplate(resource).ifPresent(template -> podLabels.add(template.getMetadata().getLabels()));
            if (resource instanceof Deployment deployment)
            {
                assertThat(deployment.getSpec().getTemplate().getMetadata().getLabels()).as(document.describe())
                    .containsAllEntriesOf(deployment.getSpec().getSelector().getMatchLabels());
            }
            if (resource instanceof StatefulSet statefulSet)
            {
                assertThat(statefulSet.getSpec().getTemplate().getMetadata().getLabels()).as(document.describe())
                    .containsAllEntriesOf(statefulSet.getSpec().getSelector().getMatchLabels());
            }
        }
        for (final Manifests.Document document : documents)
        {
            final Map<String, String> selector;
            if (document.resource() instanceof Service service)
            {
                selector = service.getSpec().getSelector();
            }
            else if (document.resource() instanceof PodDisruptionBudget budget)
            {
                selector = budget.getSpec().getSelector().getMatchLabels();
            }
            else
            {
                continue;
            }
            assertThat(selector).as(document.describe()).isNotEmpty();
            assertThat(podLabels.stream().filter(labels -> labels.entrySet().containsAll(selector.entrySet())))
                .as(document.describe() + " selects no pod template").isNotEmpty();
        }
    }

    @Test
    void longRunningContainersHaveProbesAndHttpProbesUseTheActuatorHealthGroups()
    {
        int httpProbes = 0;
        for (final Manifests.Document document : documents)
        {
            if (!(document.resource() instanceof Deployment) && !(document.resource() instanceof StatefulSet))
            {
                continue;
            }
            for (final Container container : Manifests.podTemplate(document.resource()).orElseThrow().getSpec().getContainers())
            {
                final String where = document.describe() + " container " + container.getName();
                assertThat(container.getLivenessProbe()).as(where + " liveness").isNotNull();
                assertThat(container.getReadinessProbe()).as(where + " readiness").isNotNull();
                httpProbes += checkProbe(where, container, container.getLivenessProbe(), "/actuator/health/liveness");
                httpProbes += checkProbe(where, container, container.getStartupProbe(), "/actuator/health/liveness");
                httpProbes += checkProbe(where, container, container.getReadinessProbe(), "/actuator/health/readiness");
            }
        }
        assertThat(httpProbes).as("gateway probes over HTTP").isGreaterThanOrEqualTo(2);
    }

    @Test
    void brokersAreAStatefulSetBehindAHeadlessServiceWithTheSettingsListingEveryPod() throws Exception
    {
        final StatefulSet brokers = only(StatefulSet.class);
        final Service headless = named(Service.class, brokers.getSpec().getServiceName());
        assertThat(headless.getSpec().getClusterIP()).isEqualTo("None");
        assertThat(headless.getSpec().getPublishNotReadyAddresses()).isTrue();
        assertThat(brokers.getSpec().getVolumeClaimTemplates()).hasSize(1);
        final Container broker = brokers.getSpec().getTemplate().getSpec().getContainers().get(0);
        final int commandPort = port(broker, "command");
        final int raftPort = port(broker, "raft");
        assertThat(raftPort).isEqualTo(commandPort + 1);
        assertThat(commandPort).isEqualTo(26501);
        assertThat(headless.getSpec().getPorts()).extracting(ServicePort::getPort).contains(commandPort, raftPort);
        final String dataClaim = brokers.getSpec().getVolumeClaimTemplates().get(0).getMetadata().getName();

        final Map<String, String> settings = configFor(broker);
        assertThat(broker.getVolumeMounts()).extracting(VolumeMount::getName).contains(dataClaim);
        assertThat(broker.getVolumeMounts()).extracting(VolumeMount::getMountPath).contains(settings.get("SLUICE_DATADIR"));
        final List<String> addresses = Arrays.asList(settings.get("SLUICE_CLUSTER_BROKERS").split(","));
        final int replicas = brokers.getSpec().getReplicas();
        assertThat(addresses).hasSize(replicas);
        for (int i = 0; i < replicas; i++)
        {
            assertThat(addresses.get(i)).isEqualTo(brokers.getMetadata().getName() + "-" + i + "."
                + headless.getMetadata().getName() + ":" + commandPort);
        }
        assertThat(Integer.parseInt(settings.get("SLUICE_CLUSTER_REPLICATIONFACTOR"))).isLessThanOrEqualTo(replicas);

        final PodDisruptionBudget budget = only(PodDisruptionBudget.class);
        assertThat(budget.getSpec().getMaxUnavailable()).isEqualTo(new IntOrString(1));
        assertThat(brokers.getSpec().getTemplate().getMetadata().getLabels())
            .containsAllEntriesOf(budget.getSpec().getSelector().getMatchLabels());
    }

    @Test
    void theBrokerTakesItsNodeIdFromThePodIndexLabelInTheImagesEntrypoint() throws IOException
    {
        final StatefulSet brokers = only(StatefulSet.class);
        final Container broker = brokers.getSpec().getTemplate().getSpec().getContainers().get(0);
        final EnvVar nodeId = env(broker, "SLUICE_BROKER_NODEID");
        // The StatefulSet controller labels each pod with its ordinal: sluice-broker-2 is broker 2.
        assertThat(nodeId.getValueFrom().getFieldRef().getFieldPath())
            .isEqualTo("metadata.labels['apps.kubernetes.io/pod-index']");
        assertThat(Dockerfile.load().commandLine(broker)).containsExactly("java", "-jar", "/opt/sluice/sluice.jar", "broker");
    }

    @Test
    void theGatewayExposesManagementOnAllInterfacesOnlyWithATokenFromASecret() throws IOException
    {
        final Deployment gateway = only(Deployment.class);
        final Container container = gateway.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(Dockerfile.load().commandLine(container)).containsSubsequence("-jar", "/opt/sluice/sluice.jar", "gateway");
        assertThat(port(container, "http")).isEqualTo(8080);
        assertThat(port(container, "management")).isEqualTo(MANAGEMENT_PORT);
        // Both addresses explicitly: without them the gateway binds its management API to loopback.
        assertThat(env(container, "SERVER_ADDRESS").getValue()).isEqualTo("0.0.0.0");
        assertThat(env(container, "MANAGEMENT_SERVER_ADDRESS").getValue()).isEqualTo("0.0.0.0");
        final EnvVar token = env(container, "SLUICE_MANAGEMENT_TOKEN");
        assertThat(token.getValue()).isNull();
        assertThat(token.getValueFrom().getSecretKeyRef().getName()).isEqualTo(SECRET_CREATED_BY_OPERATOR);
        assertThat(token.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("token");
        assertThat(configFor(container)).containsKeys("SLUICE_CLUSTER_BROKERS", "SLUICE_CLUSTER_PARTITIONS");

        final Service service = named(Service.class, gateway.getMetadata().getName());
        assertThat(service.getSpec().getPorts()).extracting(ServicePort::getPort).contains(8080, MANAGEMENT_PORT);
    }

    @Test
    void everyReferencedConfigMapAndSecretExistsOrIsTheDocumentedToken()
    {
        for (final Manifests.Document document : documents)
        {
            final var template = Manifests.podTemplate(document.resource());
            if (template.isEmpty())
            {
                continue;
            }
            for (final Container container : Manifests.containers(template.get()))
            {
                if (container.getEnvFrom() != null)
                {
                    container.getEnvFrom().stream().filter(source -> source.getConfigMapRef() != null)
                        .forEach(source -> named(ConfigMap.class, source.getConfigMapRef().getName()));
                }
                if (container.getEnv() != null)
                {
                    for (final EnvVar env : container.getEnv())
                    {
                        if (env.getValueFrom() != null && env.getValueFrom().getSecretKeyRef() != null)
                        {
                            assertThat(env.getValueFrom().getSecretKeyRef().getName()).isEqualTo(SECRET_CREATED_BY_OPERATOR);
                        }
                    }
                }
            }
            if (template.get().getSpec().getVolumes() != null)
            {
                template.get().getSpec().getVolumes().stream().filter(volume -> volume.getConfigMap() != null)
                    .forEach(volume -> named(ConfigMap.class, volume.getConfigMap().getName()));
            }
            final String account = template.get().getSpec().getServiceAccountName();
            if (account != null)
            {
                assertThat(documents.stream().filter(d -> d.resource() instanceof RoleBinding binding
                    && binding.getSubjects().stream().anyMatch(subject -> account.equals(subject.getName()))))
                    .as("a RoleBinding for service account " + account).isNotEmpty();
            }
        }
    }

    @Test
    void theBackupCronJobNeverOverlapsIsBoundedAndLeavesTimeToResume()
    {
        final CronJob cronJob = only(CronJob.class);
        assertThat(cronJob.getSpec().getConcurrencyPolicy()).isEqualTo("Forbid");
        assertThat(cronJob.getSpec().getStartingDeadlineSeconds()).isPositive();
        assertThat(cronJob.getSpec().getSchedule()).matches("\\S+( \\S+){4}");
        final JobSpec job = cronJob.getSpec().getJobTemplate().getSpec();
        assertThat(job.getActiveDeadlineSeconds()).isPositive();
        assertThat(job.getTemplate().getSpec().getRestartPolicy()).isIn("Never", "OnFailure");
        assertThat(job.getTemplate().getSpec().getTerminationGracePeriodSeconds()).isGreaterThanOrEqualTo(60L);
    }

    @Test
    void theBackupCronJobsCommandLineIsAcceptedByTheRealHookAndTheRealCli(@TempDir final Path temp) throws Exception
    {
        final CronJob cronJob = only(CronJob.class);
        final PodTemplateSpec template = cronJob.getSpec().getJobTemplate().getSpec().getTemplate();
        final Container container = template.getSpec().getContainers().get(0);
        final List<String> command = new ArrayList<>(container.getCommand());
        command.addAll(container.getArgs() == null ? List.of() : container.getArgs());
        assertThat(command.get(0)).isEqualTo("/opt/sluice/bin/backup-hook.sh");

        // The hook parses the CronJob's options and prints the calls it would make.
        final List<String> printPlan = new ArrayList<>(List.of("bash", hook().toString(), "--print-plan"));
        printPlan.addAll(command.subList(1, command.size()));
        final Map<String, String> env = new HashMap<>();
        for (final EnvVar var : container.getEnv())
        {
            if (var.getValue() != null)
            {
                env.put(var.getName(), var.getValue());
            }
        }
        env.put("PATH", "/usr/bin:/bin");
        final Result result = exec(printPlan, env, temp);
        assertThat(result.exitCode()).as("hook rejected the CronJob's options: " + result.err()).isZero();
        final Map<String, List<String>> plan = new HashMap<>();
        result.out().lines().forEach(line ->
        {
            final List<String> fields = Arrays.asList(line.split("\t"));
            plan.put(fields.get(0), fields.subList(1, fields.size()));
        });
        assertThat(plan.get("cli").get(0)).isEqualTo("java");
        assertThat(plan.get("cli")).endsWith("-jar", "/opt/sluice/sluice.jar", "admin");

        // The CLI calls the hook makes parse with the real CLI's options.
        for (final String step : List.of("pause", "resume"))
        {
            final String[] args = plan.get(step).toArray(String[]::new);
            final CommandLine cli = AdminCli.commandLine(silentConsole());
            final CommandLine.ParseResult parsed = cli.parseArgs(args);
            assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("exporting");
            assertThat(parsed.subcommand().subcommand().commandSpec().name()).isEqualTo(step);
            final String gateway = parsed.subcommand().subcommand().matchedOptionValue("--gateway", "");
            final URI uri = URI.create(gateway);
            final Service service = named(Service.class, uri.getHost());
            assertThat(service.getSpec().getPorts()).extracting(ServicePort::getPort).contains(uri.getPort());
            assertThat(uri.getPort()).isEqualTo(MANAGEMENT_PORT);
        }
        // After SIGTERM the hook needs the stop timeout, then time to resume (rounds of ~5 s plus backoff).
        final long stopTimeout = Long.parseLong(plan.get("stop-timeout").get(0));
        assertThat(template.getSpec().getTerminationGracePeriodSeconds()).isGreaterThanOrEqualTo(stopTimeout + 60);
        assertThat(env(container, "SLUICE_TOKEN").getValueFrom().getSecretKeyRef().getName())
            .isEqualTo(SECRET_CREATED_BY_OPERATOR);

        // The backup command runs a script mounted from a ConfigMap that exists and is valid sh.
        final List<String> backup = plan.get("backup");
        final String body = mountedScript(template, container, Path.of(backup.get(backup.size() - 1)));
        final Path copy = temp.resolve("backup.sh");
        Files.writeString(copy, body);
        final Result syntax = exec(List.of("sh", "-n", copy.toString()), Map.of("PATH", "/usr/bin:/bin"), temp);
        assertThat(syntax.exitCode()).as(syntax.err()).isZero();
        for (final String variable : List.of(
            "SLUICE_BROKER_SELECTOR", "SLUICE_BROKER_COUNT", "SLUICE_SNAPSHOT_CLASS", "SLUICE_SNAPSHOT_TIMEOUT"))
        {
            if (body.contains("$" + variable))
            {
                assertThat(env).as("env of the backup container").containsKey(variable);
            }
        }
        assertThat(Integer.parseInt(env.get("SLUICE_BROKER_COUNT"))).isEqualTo(only(StatefulSet.class).getSpec().getReplicas());
    }

    /**
     * backup.sh run with a kubectl stand-in that records its calls and answers {@code get} with the claims the
     * StatefulSet controller makes (named {@code <template>-<StatefulSet>-<ordinal>}, labelled with the
     * StatefulSet's selector): it finds them by that selector, snapshots each once, and its Role allows every call.
     */
    @Test
    void backupShSnapshotsEveryBrokerClaimFoundByTheSelectorWithCallsItsRoleAllows(@TempDir final Path temp)
        throws Exception
    {
        final PodTemplateSpec template = only(CronJob.class).getSpec().getJobTemplate().getSpec().getTemplate();
        final Container container = template.getSpec().getContainers().get(0);
        final List<String> args = container.getArgs();
        final String script = mountedScript(template, container, Path.of(args.get(args.size() - 1)));
        final StatefulSet brokers = only(StatefulSet.class);
        final Map<String, String> selector = brokers.getSpec().getSelector().getMatchLabels();
        final List<String> claims = new ArrayList<>();
        for (final PersistentVolumeClaim claimTemplate : brokers.getSpec().getVolumeClaimTemplates())
        {
            for (int ordinal = 0; ordinal < brokers.getSpec().getReplicas(); ordinal++)
            {
                claims.add(
                    claimTemplate.getMetadata().getName() + "-" + brokers.getMetadata().getName() + "-" + ordinal);
            }
        }

        final List<KubectlCall> calls = runBackupScript(temp.resolve("found"), container, script, claims);
        final List<String> snapshotted = new ArrayList<>();
        String snapshotLabel = null;
        for (final KubectlCall call : calls)
        {
            final KubectlRequest request = KubectlRequest.of(call);
            assertThat(roleRulesOf(template)).as("the backup Role allows %s (%s)", request, call).anySatisfy(rule ->
            {
                assertThat(rule.getApiGroups()).contains(request.apiGroup());
                assertThat(rule.getResources()).contains(request.resource());
                assertThat(rule.getVerbs()).containsAll(request.verbs());
            });
            if (call.verb().equals("get"))
            {
                assertThat(request.resource()).as(call.toString()).isEqualTo("persistentvolumeclaims");
                assertThat(call.args()).as(call.toString()).containsSubsequence("-o", "name");
                assertThat(labels(call.option("-l"))).as("the selector of %s", call).isEqualTo(selector);
            }
            if (call.verb().equals("apply"))
            {
                final GenericKubernetesResource snapshot = SERIALIZATION
                    .unmarshal(call.stdin(), GenericKubernetesResource.class);
                snapshotted.add(snapshot.get("spec", "source", "persistentVolumeClaimName"));
                snapshotLabel = "sluice.io/backup=" + snapshot.getMetadata().getLabels().get("sluice.io/backup");
            }
        }
        assertThat(calls).extracting(KubectlCall::verb).as("kubectl calls").startsWith("get").endsWith("wait");
        assertThat(snapshotted).as("the claims snapshotted").containsExactlyInAnyOrderElementsOf(claims);
        assertThat(calls.get(calls.size() - 1).option("-l")).as("what kubectl wait waits for").isEqualTo(snapshotLabel);

        // Fewer claims than brokers (a selector that no longer matches them): no snapshot, and the hook hears of it.
        final List<KubectlCall> tooFew =
            runBackupScript(temp.resolve("too-few"), container, script, claims.subList(0, 1));
        assertThat(tooFew).extracting(KubectlCall::verb).as("kubectl calls").containsExactly("get");
    }

    private static int checkProbe(final String where, final Container container, final Probe probe, final String path)
    {
        if (probe == null || probe.getHttpGet() == null)
        {
            if (probe != null)
            {
                assertThat(probe.getTcpSocket() != null || probe.getExec() != null || probe.getGrpc() != null)
                    .as(where + ": probe without a handler").isTrue();
            }
            return 0;
        }
        assertThat(probe.getHttpGet().getPath()).as(where).isEqualTo(path);
        final IntOrString port = probe.getHttpGet().getPort();
        final int number = port.getIntVal() != null ? port.getIntVal() : port(container, port.getStrVal());
        assertThat(number).as(where + ": probes go to the management port").isEqualTo(MANAGEMENT_PORT);
        return 1;
    }

    private static int port(final Container container, final String name)
    {
        return container.getPorts().stream().filter(port -> name.equals(port.getName()))
            .map(ContainerPort::getContainerPort).findFirst()
            .orElseThrow(() -> new AssertionError("container " + container.getName() + " has no port named " + name));
    }

    private static EnvVar env(final Container container, final String name)
    {
        return container.getEnv().stream().filter(env -> env.getName().equals(name)).findFirst()
            .orElseThrow(() -> new AssertionError("container " + container.getName() + " has no env " + name));
    }

    /** The settings a container sees: its ConfigMaps' data, then its literal env values. */
    private static Map<String, String> configFor(final Container container)
    {
        final Map<String, String> settings = new HashMap<>();
        if (container.getEnvFrom() != null)
        {
            container.getEnvFrom().stream().filter(source -> source.getConfigMapRef() != null)
                .forEach(source -> settings.putAll(named(ConfigMap.class, source.getConfigMapRef().getName()).getData()));
        }
        if (container.getEnv() != null)
        {
            container.getEnv().stream().filter(env -> env.getValue() != null)
                .forEach(env -> settings.put(env.getName(), env.getValue()));
        }
        return settings;
    }

    private static <T extends HasMetadata> T only(final Class<T> type)
    {
        return Manifests.only(documents, type);
    }

    private static <T extends HasMetadata> T named(final Class<T> type, final String name)
    {
        return Manifests.named(documents, type, name);
    }

    private static Path hook()
    {
        final Path hook = Manifests.DIRECTORY.resolveSibling("bin").resolve("backup-hook.sh");
        assertThat(hook).exists();
        return hook;
    }

    private static CliConsole silentConsole()
    {
        final PrintStream sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        return CliConsole.of(sink, sink, Map.of());
    }

    /** The body of a script the container runs from a ConfigMap volume; fails when it is not there. */
    private static String mountedScript(final PodTemplateSpec template, final Container container, final Path script)
    {
        final VolumeMount mount = container.getVolumeMounts().stream()
            .filter(m -> script.startsWith(m.getMountPath())).findFirst().orElseThrow();
        final Volume volume = template.getSpec().getVolumes().stream()
            .filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
        final ConfigMap scripts = named(ConfigMap.class, volume.getConfigMap().getName());
        final String body = scripts.getData().get(script.getFileName().toString());
        assertThat(body).as("script " + script.getFileName() + " in ConfigMap " + scripts.getMetadata().getName()).isNotBlank();
        return body;
    }

    /**
     * Runs the backup script with the container's literal env and a kubectl stand-in that records each call and
     * answers {@code get} with {@code claims}; returns the calls. The script must succeed when there are as many
     * claims as brokers and fail otherwise.
     */
    private static List<KubectlCall> runBackupScript(
        final Path folder, final Container container, final String script, final List<String> claims) throws Exception
    {
        final Path bin = Files.createDirectories(folder.resolve("bin"));
        final Path calls = Files.createDirectories(folder.resolve("calls"));
        Files.write(folder.resolve("claims"), claims.stream().map(claim -> "persistentvolumeclaim/" + claim).toList());
        final Path kubectl = bin.resolve("kubectl");
        Files.writeString(kubectl, String.join("\n",
            "#!/bin/sh",
            "n=0",
            "while ! mkdir \"$KUBECTL_CALLS/$n\" 2>/dev/null; do n=$((n + 1)); done",
            "printf '%s\\n' \"$@\" > \"$KUBECTL_CALLS/$n/args\"",
            "case \"$1\" in",
            "  apply) cat > \"$KUBECTL_CALLS/$n/stdin\" ;;",
            "  get) cat \"$KUBECTL_CLAIMS\" ;;",
            "esac",
            ""));
        Files.setPosixFilePermissions(kubectl, PosixFilePermissions.fromString("rwxr-xr-x"));
        final Path copy = folder.resolve("backup.sh");
        Files.writeString(copy, script);

        final Map<String, String> env = new HashMap<>();
        container.getEnv().stream().filter(var -> var.getValue() != null)
            .forEach(var -> env.put(var.getName(), var.getValue()));
        env.put("PATH", bin + ":/usr/bin:/bin");
        env.put("KUBECTL_CALLS", calls.toString());
        env.put("KUBECTL_CLAIMS", folder.resolve("claims").toString());
        final Result result = exec(List.of("sh", copy.toString()), env, folder);
        final boolean enough = claims.size() >= Integer.parseInt(env.get("SLUICE_BROKER_COUNT"));
        assertThat(result.exitCode() == 0).as("backup.sh with %d claims: exit %d, %s", claims.size(), result.exitCode(),
            result.err()).isEqualTo(enough);

        final List<KubectlCall> recorded = new ArrayList<>();
        for (int n = 0; Files.isDirectory(calls.resolve(Integer.toString(n))); n++)
        {
            final Path call = calls.resolve(Integer.toString(n));
            final Path stdin = call.resolve("stdin");
            recorded.add(new KubectlCall(Files.readAllLines(call.resolve("args")),
                Files.exists(stdin) ? Files.readString(stdin) : ""));
        }
        return recorded;
    }

    /** The rules of the Role bound to the pod's service account. */
    private static List<PolicyRule> roleRulesOf(final PodTemplateSpec template)
    {
        final String account = template.getSpec().getServiceAccountName();
        return documents.stream().map(Manifests.Document::resource)
            .filter(RoleBinding.class::isInstance).map(RoleBinding.class::cast)
            .filter(binding -> binding.getSubjects().stream().anyMatch(subject -> account.equals(subject.getName())))
            .filter(binding -> binding.getRoleRef().getKind().equals("Role"))
            .flatMap(binding -> named(Role.class, binding.getRoleRef().getName()).getRules().stream())
            .toList();
    }

    /** {@code a=1,b=2} as a map; fails on anything but equality terms. */
    private static Map<String, String> labels(final String selector)
    {
        final Map<String, String> labels = new HashMap<>();
        for (final String term : selector.split(","))
        {
            assertThat(term).as("a term of the label selector " + selector).matches("[^=!]+=[^=!]+");
            labels.put(term.substring(0, term.indexOf('=')), term.substring(term.indexOf('=') + 1));
        }
        return labels;
    }

    /** One call of the kubectl stand-in. */
    private record KubectlCall(List<String> args, String stdin)
    {
        String verb()
        {
            return args.isEmpty() ? "" : args.get(0);
        }

        /** The value of {@code name VALUE}; fails when the call has none. */
        String option(final String name)
        {
            final int index = args.indexOf(name);
            assertThat(index).as("%s in %s", name, this).isNotNegative().isLessThan(args.size() - 1);
            return args.get(index + 1);
        }

        @Override
        public String toString()
        {
            return "kubectl " + String.join(" ", args);
        }
    }

    /**
     * What a kubectl call asks of the API server, as RBAC names it. Only the calls and resources backup.sh makes
     * are known; another one fails here, to be added with the verbs kubectl needs for it.
     */
    private record KubectlRequest(String apiGroup, String resource, List<String> verbs)
    {
        private static final Map<String, List<String>> RESOURCES = Map.of(
            "persistentvolumeclaims", List.of("", "persistentvolumeclaims"),
            "volumesnapshot", List.of("snapshot.storage.k8s.io", "volumesnapshots"),
            "VolumeSnapshot", List.of("snapshot.storage.k8s.io", "volumesnapshots"));

        static KubectlRequest of(final KubectlCall call)
        {
            final String verb = call.verb();
            final String resource = verb.equals("apply")
                ? SERIALIZATION.unmarshal(call.stdin(), GenericKubernetesResource.class).getKind()
                : call.args().get(1);
            final List<String> known = RESOURCES.get(resource);
            assertThat(known).as("RBAC names of %s in %s", resource, call).isNotNull();
            final List<String> verbs = switch (verb)
            {
                // kubectl apply reads the object, then creates it (the snapshot names are new each run).
                case "apply" -> List.of("get", "create");
                case "get" -> call.args().contains("-l") ? List.of("list") : List.of("get");
                case "wait" -> List.of("list", "watch");
                default -> throw new AssertionError("a kubectl call this test does not know: " + call);
            };
            return new KubectlRequest(known.get(0), known.get(1), verbs);
        }
    }

    record Result(int exitCode, String out, String err)
    {
    }

    private static Result exec(final List<String> command, final Map<String, String> env, final Path dir) throws Exception
    {
        final Path out = Files.createTempFile(dir, "out", ".txt");
        final Path err = Files.createTempFile(dir, "err", ".txt");
        final ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
            .redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().clear();
        builder.environment().putAll(env);
        final Process process = builder.start();
        if (!process.waitFor(60, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new AssertionError(command + " did not end within 60s");
        }
        return new Result(process.exitValue(), Files.readString(out), Files.readString(err));
    }
}
