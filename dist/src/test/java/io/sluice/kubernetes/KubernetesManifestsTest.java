package io.sluice.kubernetes;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.sluice.cli.AdminCli;
import io.sluice.cli.CliConsole;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The manifests under dist/kubernetes: strictly valid for the fabric8 model, required fields present,
 * selectors matching, probes on the actuator health groups, the cluster settings consistent with the
 * StatefulSet, and the backup CronJob's command line accepted by the real CLI.
 */
@Timeout(120)
class KubernetesManifestsTest
{
    private static final String SECRET_CREATED_BY_OPERATOR = "sluice-management";
    private static final int MANAGEMENT_PORT = 9600;

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
    void theBackupCronJobNeverOverlapsAndOutlastsTheUploadTimeout()
    {
        final CronJob cronJob = only(CronJob.class);
        assertThat(cronJob.getSpec().getConcurrencyPolicy()).isEqualTo("Forbid");
        assertThat(cronJob.getSpec().getStartingDeadlineSeconds()).isPositive();
        assertThat(cronJob.getSpec().getSchedule()).matches("\\S+( \\S+){4}");
        final JobSpec job = cronJob.getSpec().getJobTemplate().getSpec();
        // --wait follows the upload, which the gateway ends by sluice.backup.upload-timeout (30m) at the latest.
        assertThat(job.getActiveDeadlineSeconds()).isGreaterThan(Duration.ofMinutes(30).toSeconds());
        assertThat(job.getTemplate().getSpec().getRestartPolicy()).isIn("Never", "OnFailure");
    }

    /** The CronJob runs the one-call backup through the image's entrypoint (the jar), with the real CLI's options. */
    @Test
    void theBackupCronJobTakesABackupInOneCallAndWaitsForItWithTheRealClisOptions()
    {
        final PodTemplateSpec template = only(CronJob.class).getSpec().getJobTemplate().getSpec().getTemplate();
        final Container container = template.getSpec().getContainers().get(0);
        assertThat(container.getCommand()).as("the image's entrypoint runs the jar").isNullOrEmpty();
        assertThat(container.getArgs().get(0)).as("the jar's mode").isEqualTo("admin");
        final CommandLine.ParseResult parsed = AdminCli.commandLine(silentConsole())
            .parseArgs(container.getArgs().subList(1, container.getArgs().size()).toArray(String[]::new));
        final CommandLine.ParseResult backup = parsed.subcommand();
        assertThat(backup.commandSpec().name()).isEqualTo("backup");
        final CommandLine.ParseResult take = backup.subcommand();
        assertThat(take.commandSpec().name()).isEqualTo("take");
        assertThat(take.hasMatchedOption("--wait")).as("follows the backup until it completed or failed").isTrue();
        final URI gateway = URI.create(take.matchedOptionValue("--gateway", ""));
        final Service service = named(Service.class, gateway.getHost());
        assertThat(service.getSpec().getPorts()).extracting(ServicePort::getPort).contains(gateway.getPort());
        assertThat(gateway.getPort()).isEqualTo(MANAGEMENT_PORT);
        assertThat(env(container, "SLUICE_TOKEN").getValueFrom().getSecretKeyRef().getName())
            .isEqualTo(SECRET_CREATED_BY_OPERATOR);
        assertThat(template.getSpec().getServiceAccountName()).as("no Kubernetes API access needed").isNull();
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

    private static CliConsole silentConsole()
    {
        final PrintStream sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        return CliConsole.of(sink, sink, Map.of());
    }
}
