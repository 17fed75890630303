package io.sluice.kubernetes;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What each pod of dist/kubernetes can read, rendered as Kubernetes sets it up: the process's user, group and
 * supplemental groups (pod securityContext, overridden per container), and each file of a mounted Secret or
 * ConfigMap with its owner (root), group (the pod's fsGroup, else root) and mode (the item's mode, else the
 * volume's defaultMode, else 0644). No group or mode bits are assumed beyond what the manifest asks for.
 */
class PodFileAccessTest
{
    /** Kubernetes' defaultMode of Secret and ConfigMap volumes. */
    private static final int DEFAULT_MODE = 0644;
    private static final int ROOT = 0;

    private static List<Manifests.Document> documents;

    @BeforeAll
    static void load() throws IOException
    {
        documents = Manifests.loadAll();
    }

    @Test
    void everyProcessCanReadEveryFileOfTheSecretsAndConfigMapsItMounts()
    {
        final List<MountedFile> files = mountedFiles();
        files.forEach(file -> System.out.println(file));

        assertThat(files).as("mounted Secret and ConfigMap files").isNotEmpty();
        assertThat(files).extracting(MountedFile::where).as("the TLS keys of brokers and gateways are rendered")
            .anyMatch(where -> where.contains("sluice-broker") && where.endsWith("tls.key"))
            .anyMatch(where -> where.contains("sluice-gateway") && where.endsWith("tls.key"));
        for (final MountedFile file : files)
        {
            assertThat(file.readable()).as("%s readable by its process", file).isTrue();
        }
    }

    @Test
    void privateKeysAreReadableByTheProcessAndNobodyElse()
    {
        for (final MountedFile file : mountedFiles())
        {
            if (file.where().endsWith(".key"))
            {
                assertThat(file.mode() & 0007).as("%s: no permission for others", file).isZero();
                assertThat(file.mode() & 0222).as("%s: read-only", file).isZero();
            }
        }
    }

    @Test
    void everyPodRunsAsTheSameNonRootUserGroupAndFsGroup()
    {
        final Set<String> identities = new HashSet<>();
        for (final Manifests.Document document : documents)
        {
            Manifests.podTemplate(document.resource()).ifPresent(template ->
            {
                final PodSecurityContext pod = template.getSpec().getSecurityContext();
                assertThat(pod).as(document.describe() + " securityContext").isNotNull();
                identities.add(pod.getRunAsUser() + ":" + pod.getRunAsGroup() + " fsGroup " + pod.getFsGroup());
            });
        }
        assertThat(identities).containsExactly("10001:10001 fsGroup 10001");
    }

    /** An exporter whose sink is missing retries forever and holds its partitions' logs from compaction. */
    @Test
    void noExporterPointsAtAServiceTheExamplesDoNotCreate()
    {
        final Set<String> services = new HashSet<>();
        documents.stream().filter(document -> document.resource() instanceof Service)
            .forEach(document -> services.add(document.resource().getMetadata().getName()));
        final Map<String, String> settings = new LinkedHashMap<>();
        documents.stream().filter(document -> document.resource() instanceof ConfigMap)
            .forEach(document -> settings.putAll(((ConfigMap) document.resource()).getData()));
        for (final Manifests.Document document : documents)
        {
            Manifests.podTemplate(document.resource()).ifPresent(template ->
                Manifests.containers(template).forEach(container -> container.getEnv().stream()
                    .filter(env -> env.getValue() != null).forEach(env -> settings.put(env.getName(), env.getValue()))));
        }

        final List<String> exporterEndpoints = new ArrayList<>();
        settings.forEach((name, value) ->
        {
            if (name.startsWith("SLUICE_EXPORTERS_") && (name.endsWith("_URL") || name.endsWith("_BOOTSTRAPSERVERS")))
            {
                for (final String endpoint : value.split(","))
                {
                    exporterEndpoints.add(name + "=" + endpoint.trim());
                    final String host = endpoint.contains("://") ? URI.create(endpoint.trim()).getHost()
                        : endpoint.trim().replaceAll(":\\d+$", "");
                    // <service>, <service>.<namespace>..., or <pod>.<headless service>...
                    final String[] labels = host.split("\\.");
                    assertThat(services).as("%s: the service of %s, among the examples' Services", name, host)
                        .containsAnyOf(labels[0], labels.length > 1 ? labels[1] : labels[0]);
                }
            }
        });
        assertThat(settings).as("the file exporter, on the brokers' own volumes").containsEntry("SLUICE_EXPORTERS_FILE_TYPE", "file");
        assertThat(settings.keySet()).as("exporters configured (%s)", exporterEndpoints)
            .filteredOn(name -> name.startsWith("SLUICE_EXPORTERS_") && name.endsWith("_TYPE"))
            .containsExactly("SLUICE_EXPORTERS_FILE_TYPE");
    }

    /** Every file of every Secret and ConfigMap mounted into a container, with what its process can do. */
    private static List<MountedFile> mountedFiles()
    {
        final List<MountedFile> files = new ArrayList<>();
        for (final Manifests.Document document : documents)
        {
            Manifests.podTemplate(document.resource()).ifPresent(template ->
            {
                for (final Container container : Manifests.containers(template))
                {
                    files.addAll(mountedFiles(document, template, container));
                }
            });
        }
        return files;
    }

    private static List<MountedFile> mountedFiles(final Manifests.Document document, final PodTemplateSpec template,
        final Container container)
    {
        final PodSecurityContext pod = template.getSpec().getSecurityContext();
        final SecurityContext own = container.getSecurityContext();
        final long uid = own != null && own.getRunAsUser() != null ? own.getRunAsUser() : pod.getRunAsUser();
        final long gid = own != null && own.getRunAsGroup() != null ? own.getRunAsGroup() : pod.getRunAsGroup();
        final Set<Long> groups = new HashSet<>(List.of(gid));
        if (pod.getFsGroup() != null)
        {
            groups.add(pod.getFsGroup());
        }
        if (pod.getSupplementalGroups() != null)
        {
            groups.addAll(pod.getSupplementalGroups());
        }
        final long fileGroup = pod.getFsGroup() != null ? pod.getFsGroup() : ROOT;
        final List<MountedFile> files = new ArrayList<>();
        for (final VolumeMount mount : container.getVolumeMounts())
        {
            // A mount without a pod volume is a StatefulSet's volumeClaimTemplate: a data volume, no Secret.
            final Volume volume = template.getSpec().getVolumes().stream().filter(v -> v.getName().equals(mount.getName()))
                .findFirst().orElse(null);
            if (volume == null)
            {
                continue;
            }
            final Integer defaultMode;
            final List<KeyToPath> items;
            final List<String> keys;
            if (volume.getSecret() != null)
            {
                defaultMode = volume.getSecret().getDefaultMode();
                items = volume.getSecret().getItems();
                // Secrets are made by the operator (docs/operations.md): the keys the ConfigMap's settings name.
                keys = secretKeys(volume.getSecret().getSecretName());
            }
            else if (volume.getConfigMap() != null)
            {
                defaultMode = volume.getConfigMap().getDefaultMode();
                items = volume.getConfigMap().getItems();
                keys = List.copyOf(Manifests.named(documents, ConfigMap.class, volume.getConfigMap().getName()).getData().keySet());
            }
            else
            {
                continue;
            }
            final String where = document.describe() + " container " + container.getName() + " " + mount.getMountPath();
            for (final String key : keys)
            {
                int mode = defaultMode != null ? defaultMode : DEFAULT_MODE;
                String path = key;
                if (items != null && !items.isEmpty())
                {
                    final KeyToPath item = items.stream().filter(i -> i.getKey().equals(key)).findFirst().orElse(null);
                    if (item == null)
                    {
                        continue;
                    }
                    path = item.getPath();
                    mode = item.getMode() != null ? item.getMode() : mode;
                }
                files.add(new MountedFile(where + "/" + path, uid, groups, ROOT, fileGroup, mode));
            }
        }
        return files;
    }

    /** The keys of a Secret the operator creates, as the manifests' comments and docs/operations.md show them. */
    private static List<String> secretKeys(final String secretName)
    {
        if (secretName.endsWith("-tls"))
        {
            final Map<String, String> config = Manifests.named(documents, ConfigMap.class, "sluice-config").getData();
            final List<String> keys = new ArrayList<>();
            for (final String setting : List.of("SLUICE_CLUSTER_TLS_CERTIFICATE", "SLUICE_CLUSTER_TLS_PRIVATEKEY",
                "SLUICE_CLUSTER_TLS_TRUSTEDCERTIFICATES"))
            {
                final String file = config.get(setting);
                keys.add(file.substring(file.lastIndexOf('/') + 1));
            }
            return keys;
        }
        throw new AssertionError("a mounted Secret this test does not know: " + secretName);
    }

    /** One file as the container's process sees it. */
    private record MountedFile(String where, long uid, Set<Long> groups, long owner, long group, int mode)
    {
        boolean readable()
        {
            // The kernel checks owner bits for the owner, group bits for a member, other bits for the rest.
            if (uid == owner)
            {
                return (mode & 0400) != 0;
            }
            if (groups.contains(group))
            {
                return (mode & 0040) != 0;
            }
            return (mode & 0004) != 0;
        }

        @Override
        public String toString()
        {
            return String.format("%s: process uid %d groups %s, file %d:%d mode %04o", where, uid, groups, owner, group, mode);
        }
    }
}
