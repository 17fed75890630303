package io.sluice.kubernetes;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.sluice.dist.SluiceProperties;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The image {@code dist/docker/Dockerfile} builds and the manifests under {@code dist/kubernetes} that run it agree
 * (CONTRACT §7), read from both without building or running anything: every path, port, user id, environment
 * variable and command a manifest uses exists in or suits the image. qa's container cluster test runs them for real.
 */
class ImageAgreesWithManifestsTest
{
    private static final Path ROOT = Manifests.DIRECTORY.getParent().getParent();
    private static final String JAR = "/opt/sluice/sluice.jar";
    private static final String HOOK = "/opt/sluice/bin/backup-hook.sh";
    private static final List<String> MODES = List.of("standalone", "broker", "gateway", "admin");
    /** The Spring properties of CONTRACT §1 (and Spring Boot's own) a broker or gateway container may set. */
    private static final List<String> PROPERTIES = List.of(
        "sluice.cluster.brokers", "sluice.cluster.partitions", "sluice.cluster.replication-factor",
        "sluice.cluster.control-voters", "sluice.broker.node-id", "sluice.data-dir", "sluice.gateway.request-timeout",
        "sluice.management.token", "sluice.records.idempotency-window", "server.port", "server.address",
        "management.server.port", "management.server.address", "sluice.cluster.auto-rebalance",
        "sluice.cluster.tls.enabled", "sluice.cluster.tls.certificate", "sluice.cluster.tls.private-key",
        "sluice.cluster.tls.trusted-certificates",
        // The example's exporters: the default file one kept beside an OpenSearch one (README, operations.md).
        "sluice.exporters.file.type", "sluice.exporters.search.type", "sluice.exporters.search.url",
        "sluice.exporters.search.index", "sluice.exporters.search.on-rejected");
    /** What every JRE base image has besides java (the hook needs bash; a backup command may run sh). */
    private static final List<String> BASE_IMAGE_PATHS = List.of("/bin/sh", "/bin/bash", "/usr/bin/env");
    private static List<Manifests.Document> documents;
    private static Dockerfile dockerfile;
    /** The image reference the manifests run, e.g. sluice:0.1.0. */
    private static String image;

    @BeforeAll
    static void load() throws IOException
    {
        documents = Manifests.loadAll();
        dockerfile = Dockerfile.load();
        image = imageOf(documents);
    }

    /** The one image reference every container named {@code sluice} uses; fails when they differ. */
    static String imageOf(final List<Manifests.Document> documents)
    {
        final List<String> images = documents.stream().map(Manifests.Document::resource).map(Manifests::podTemplate)
            .flatMap(Optional::stream).flatMap(template -> Manifests.containers(template).stream())
            .map(Container::getImage).filter(name -> name.matches("(localhost/)?sluice:.+")).distinct().toList();
        assertThat(images).as("the sluice image references of dist/kubernetes").hasSize(1);
        return images.get(0);
    }

    @Test
    void theImageIsBuiltOnAJre17BaseGivenAsABuildArgument()
    {
        assertThat(dockerfile.from()).isEqualTo("${BASE_IMAGE}");
        assertThat(dockerfile.argDefault("BASE_IMAGE")).as("ARG BASE_IMAGE's default, a public JRE 17 image")
            .hasValueSatisfying(base -> assertThat(base).contains("17").containsIgnoringCase("jre"));
    }

    @Test
    void theImageHoldsTheBuiltJarAndTheHookWhereTheManifestsRunThem() throws IOException
    {
        final Map<String, String> copies = dockerfile.copies();
        assertThat(copies).containsEntry(JAR, "dist/target/sluice.jar").containsEntry(HOOK, "dist/bin/backup-hook.sh");
        assertThat(Files.readString(ROOT.resolve("dist/pom.xml"))).as("dist/pom.xml names the jar it builds")
            .contains("<finalName>sluice</finalName>");
        assertThat(ROOT.resolve(copies.get(HOOK))).isRegularFile().isExecutable();

        int checked = 0;
        for (final Workload workload : sluiceContainers())
        {
            final List<String> commandLine = dockerfile.commandLine(workload.container());
            final String where = workload.describe() + " runs " + commandLine;
            final String program = commandLine.get(0);
            if (program.equals(dockerfile.entrypoint().get(0)))
            {
                // the JVM of the entrypoint: java -jar <the jar copied in> <mode> ...
                assertThat(commandLine).as(where).startsWith(dockerfile.entrypoint().toArray(String[]::new));
                assertThat(commandLine.size()).as(where + ": a mode after the jar").isGreaterThan(dockerfile.entrypoint().size());
                assertThat(commandLine.get(dockerfile.entrypoint().size())).as(where + ": the mode").isIn(MODES);
            }
            else
            {
                assertThat(copies).as(where + ": a program the image has").containsKey(program);
                assertThat(ROOT.resolve(copies.get(program))).as(where).isExecutable();
            }
            for (final String value : valuesOf(workload.container(), commandLine))
            {
                if (value.startsWith("/"))
                {
                    assertThat(dockerfile.hasPath(value) || mountedIn(workload.container(), value)
                        || BASE_IMAGE_PATHS.contains(value))
                        .as("%s: %s is neither in the image nor in a volume of the container", workload.describe(), value)
                        .isTrue();
                }
            }
            checked++;
        }
        assertThat(checked).as("containers of the sluice image (brokers, gateway, backup)").isGreaterThanOrEqualTo(3);
    }

    @Test
    void everyPodOfTheImageRunsAsItsNonRootUser()
    {
        assertThat(dockerfile.uid()).isEqualTo(10001L).isNotZero();
        assertThat(dockerfile.gid()).isEqualTo(10001L);
        final String run = String.join("\n", dockerfile.all("RUN").stream().map(Dockerfile.Instruction::arguments).toList());
        assertThat(run).as("the image creates its user and group")
            .contains("--gid " + dockerfile.gid()).contains("--uid " + dockerfile.uid());
        for (final Workload workload : sluiceContainers())
        {
            final PodSecurityContext pod = workload.template().getSpec().getSecurityContext();
            assertThat(pod).as(workload.describe() + " pod securityContext").isNotNull();
            assertThat(pod.getRunAsNonRoot()).as(workload.describe()).isTrue();
            assertThat(pod.getRunAsUser()).as(workload.describe() + " runAsUser").isEqualTo(dockerfile.uid());
            assertThat(pod.getRunAsGroup()).as(workload.describe() + " runAsGroup").isEqualTo(dockerfile.gid());
            if (pod.getFsGroup() != null)
            {
                assertThat(pod.getFsGroup()).as(workload.describe() + " fsGroup").isEqualTo(dockerfile.gid());
            }
            final var container = workload.container().getSecurityContext();
            if (container != null)
            {
                assertThat(container.getRunAsUser()).as(workload.describe()).isIn(null, dockerfile.uid());
                assertThat(container.getRunAsGroup()).as(workload.describe()).isIn(null, dockerfile.gid());
            }
        }
    }

    @Test
    void theBrokersDataVolumeIsTheImagesDataDirectory()
    {
        final Map<String, String> imageEnv = dockerfile.env();
        final String dataDir = imageEnv.get("SLUICE_DATADIR");
        assertThat(dataDir).as("the image's SLUICE_DATADIR").isEqualTo("/var/lib/sluice");
        assertThat(dockerfile.volumes()).containsExactly(dataDir);
        assertThat(dockerfile.workdir()).isEqualTo(dataDir);
        final StatefulSet brokers = Manifests.only(documents, StatefulSet.class);
        final Container broker = brokers.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(environment(broker, 0).getOrDefault("SLUICE_DATADIR", dataDir)).isEqualTo(dataDir);
        final String claim = brokers.getSpec().getVolumeClaimTemplates().get(0).getMetadata().getName();
        assertThat(broker.getVolumeMounts()).as("the broker's persistent volume is mounted on the data directory")
            .anySatisfy(mount ->
            {
                assertThat(mount.getName()).isEqualTo(claim);
                assertThat(mount.getMountPath()).isEqualTo(dataDir);
            });
    }

    @Test
    void theSettingsTheManifestsGiveAsEnvironmentVariablesBindToTheProperties()
    {
        final StatefulSet brokers = Manifests.only(documents, StatefulSet.class);
        final Container broker = brokers.getSpec().getTemplate().getSpec().getContainers().get(0);
        for (final int ordinal : new int[] {0, brokers.getSpec().getReplicas() - 1})
        {
            final Map<String, Object> env = new HashMap<>(environment(broker, ordinal));
            final Binder binder = new Binder(ConfigurationPropertySources.from(new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, env)));
            final SluiceProperties properties = binder.bind("sluice", SluiceProperties.class).get();
            assertThat(properties.getBroker().getNodeId()).as("sluice.broker.node-id of pod ordinal " + ordinal)
                .isEqualTo(ordinal);
            assertThat(properties.getDataDir()).isEqualTo(Path.of(dockerfile.env().get("SLUICE_DATADIR")));
        }
        for (final Workload workload : sluiceContainers())
        {
            final List<String> commandLine = dockerfile.commandLine(workload.container());
            final int modeAt = dockerfile.entrypoint().size();
            if (commandLine.size() <= modeAt || !List.of("broker", "gateway").contains(commandLine.get(modeAt)))
            {
                continue;
            }
            environment(workload.container(), 0).forEach((name, value) ->
            {
                if (name.startsWith("SLUICE_") || name.startsWith("SERVER_") || name.startsWith("MANAGEMENT_"))
                {
                    final ConfigurationPropertySource source = ConfigurationPropertySource.from(
                        new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, Map.of(name, value)));
                    assertThat(PROPERTIES).as("%s: %s sets one of the properties", workload.describe(), name)
                        .anyMatch(property -> source.getConfigurationProperty(ConfigurationPropertyName.of(property)) != null);
                }
            });
        }
    }

    @Test
    void everyContainerPortIsOneTheImageExposes()
    {
        assertThat(dockerfile.exposedPorts()).contains(8080, 9600, 26501, 26502);
        for (final Workload workload : sluiceContainers())
        {
            if (workload.container().getPorts() != null)
            {
                assertThat(dockerfile.exposedPorts()).as(workload.describe())
                    .containsAll(workload.container().getPorts().stream().map(ContainerPort::getContainerPort).toList());
            }
        }
    }

    @Test
    void theJvmIsPid1InExecFormAndSizedByTheContainersMemoryLimit()
    {
        assertThat(dockerfile.entrypoint()).containsExactly("java", "-jar", JAR);
        assertThat(dockerfile.cmd()).containsExactly("standalone");
        assertThat(dockerfile.env().get("JAVA_TOOL_OPTIONS")).as("the image's JVM options")
            .contains("-XX:MaxRAMPercentage=").doesNotContain("-Xmx");
        for (final Workload workload : sluiceContainers())
        {
            final String where = workload.describe();
            final List<String> commandLine = dockerfile.commandLine(workload.container());
            if (commandLine.get(0).equals("java"))
            {
                assertThat(commandLine).as(where + ": the JVM itself is the process, no shell in front").doesNotContain("-c");
            }
            final String options = environment(workload.container(), 0).get("JAVA_TOOL_OPTIONS");
            if (options != null)
            {
                assertThat(options).as(where + " JAVA_TOOL_OPTIONS").contains("-XX:MaxRAMPercentage=").doesNotContain("-Xmx");
            }
            final Map<String, Quantity> limits = workload.container().getResources().getLimits();
            assertThat(limits).as(where + ": a memory limit the JVM sizes itself by").containsKey("memory");
        }
    }

    @Test
    void theImageHoldsNoSecretsAndNoBuildTools() throws IOException
    {
        final List<String> ignore = Files.readAllLines(ROOT.resolve(".dockerignore")).stream()
            .map(String::strip).filter(line -> !line.isEmpty() && !line.startsWith("#")).toList();
        assertThat(ignore).as(".dockerignore: everything out of the build context but what the image copies").isNotEmpty();
        assertThat(ignore.get(0)).isEqualTo("*");
        assertThat(ignore.subList(1, ignore.size())).containsExactlyInAnyOrderElementsOf(
            dockerfile.copies().values().stream().map(source -> "!" + source).toList());
        for (final Dockerfile.Instruction instruction : dockerfile.instructions())
        {
            if (List.of("ENV", "ARG", "LABEL").contains(instruction.keyword()))
            {
                assertThat(instruction.arguments()).as("line " + instruction.line())
                    .doesNotContainPattern("(?i)(token|password|secret|private.?key)\\s*=");
            }
            if (instruction.keyword().equals("RUN"))
            {
                assertThat(instruction.arguments()).as("line %d: no package manager or build tool in the image", instruction.line())
                    .doesNotContainPattern("\\b(apt-get|apt|apk|dnf|yum|mvn|gradle|curl|wget)\\b");
            }
        }
    }

    @Test
    void theDocumentedBuildCommandTagsTheImageTheManifestsRun() throws IOException
    {
        final Matcher version = Pattern.compile("<version>(\\d+\\.\\d+\\.\\d+)(-SNAPSHOT)?</version>")
            .matcher(Files.readString(ROOT.resolve("pom.xml")));
        assertThat(version.find()).as("the project version in pom.xml").isTrue();
        assertThat(image).as("the image of the manifests").isEqualTo("sluice:" + version.group(1));
        final String command = "podman build -f dist/docker/Dockerfile -t " + image + " .";
        for (final String doc : List.of("README.md", "docs/operations.md"))
        {
            assertThat(Files.readString(ROOT.resolve(doc), StandardCharsets.UTF_8)).as(doc).contains(command)
                .contains("mvn -B -DskipTests package");
        }
    }

    /** A container of the sluice image and the pod template it is in. */
    private record Workload(Manifests.Document document, PodTemplateSpec template, Container container)
    {
        String describe()
        {
            return document.describe() + " container " + container.getName();
        }
    }

    private static List<Workload> sluiceContainers()
    {
        final List<Workload> workloads = new ArrayList<>();
        for (final Manifests.Document document : documents)
        {
            Manifests.podTemplate(document.resource()).ifPresent(template ->
            {
                for (final Container container : Manifests.containers(template))
                {
                    if (Objects.equals(container.getImage(), image))
                    {
                        workloads.add(new Workload(document, template, container));
                    }
                }
            });
        }
        return workloads;
    }

    /**
     * The environment of a container as Kubernetes gives it to pod {@code ordinal} of its workload: ConfigMaps
     * of envFrom, then the literal values and the downward API fields this test knows; a Secret's value is "secret".
     */
    static Map<String, String> environment(final Container container, final int ordinal)
    {
        final Map<String, String> env = new LinkedHashMap<>();
        if (container.getEnvFrom() != null)
        {
            container.getEnvFrom().stream().filter(source -> source.getConfigMapRef() != null).forEach(source ->
                env.putAll(Manifests.named(documents, ConfigMap.class, source.getConfigMapRef().getName()).getData()));
        }
        for (final EnvVar variable : container.getEnv() == null ? List.<EnvVar>of() : container.getEnv())
        {
            if (variable.getValueFrom() == null)
            {
                env.put(variable.getName(), variable.getValue() == null ? "" : variable.getValue());
            }
            else if (variable.getValueFrom().getSecretKeyRef() != null)
            {
                env.put(variable.getName(), "secret");
            }
            else if (variable.getValueFrom().getFieldRef() != null)
            {
                final String field = variable.getValueFrom().getFieldRef().getFieldPath();
                assertThat(field).as("env " + variable.getName() + " from a field this test knows")
                    .isEqualTo("metadata.labels['apps.kubernetes.io/pod-index']");
                env.put(variable.getName(), Integer.toString(ordinal));
            }
            else
            {
                throw new AssertionError("env " + variable.getName() + " from " + variable.getValueFrom() + ", which this test does not know");
            }
        }
        return env;
    }

    /** Every word of the command line and every env value of a container. */
    private static List<String> valuesOf(final Container container, final List<String> commandLine)
    {
        final List<String> values = new ArrayList<>(commandLine);
        values.addAll(environment(container, 0).values());
        return values;
    }

    private static boolean mountedIn(final Container container, final String path)
    {
        return container.getVolumeMounts() != null && container.getVolumeMounts().stream()
            .anyMatch(mount -> path.equals(mount.getMountPath()) || path.startsWith(mount.getMountPath() + "/"));
    }
}
