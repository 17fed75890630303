package io.sluice.kubernetes;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Loads Kubernetes manifests strictly into the fabric8 model: every YAML document must be a known
 * kind, and no field may land in an {@code additionalProperties} map anywhere in the object tree
 * (that is where fabric8 puts unknown fields, i.e. typos). Reusable by qa tests.
 */
public final class Manifests
{
    public static final Path DIRECTORY = locate();

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** One parsed document and where it came from. */
    public record Document(Path file, int index, HasMetadata resource)
    {
        public String describe()
        {
            return file.getFileName() + "#" + index + " " + resource.getKind() + "/" + resource.getMetadata().getName();
        }
    }

    private Manifests()
    {
    }

    public static List<Path> files() throws IOException
    {
        try (Stream<Path> paths = Files.walk(DIRECTORY))
        {
            return paths.filter(Files::isRegularFile)
                .filter(path -> path.toString().endsWith(".yaml") || path.toString().endsWith(".yml"))
                .sorted()
                .toList();
        }
    }

    /** Every document of every manifest file; throws on the first that is not strictly valid. */
    public static List<Document> loadAll() throws IOException
    {
        final List<Document> documents = new ArrayList<>();
        for (final Path file : files())
        {
            documents.addAll(load(file, Files.readString(file, StandardCharsets.UTF_8)));
        }
        return documents;
    }

    public static List<Document> load(final Path file, final String yamlText)
    {
        final List<Document> documents = new ArrayList<>();
        final Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()));
        int index = 0;
        for (final Object tree : yaml.loadAll(yamlText))
        {
            final String where = file.getFileName() + " document " + index;
            if (tree == null)
            {
                index++;
                continue;
            }
            if (!(tree instanceof Map))
            {
                throw new AssertionError(where + ": not a mapping");
            }
            final KubernetesResource parsed = SERIALIZATION.unmarshal(JSON.writeValueAsString(tree), KubernetesResource.class);
            if (parsed instanceof GenericKubernetesResource generic)
            {
                throw new AssertionError(where + ": unknown kind " + generic.getApiVersion() + "/" + generic.getKind());
            }
            if (!(parsed instanceof HasMetadata resource) || resource.getMetadata() == null
                || resource.getMetadata().getName() == null || resource.getMetadata().getName().isBlank())
            {
                throw new AssertionError(where + ": no metadata.name");
            }
            final List<String> unknown = unknownFields(resource);
            if (!unknown.isEmpty())
            {
                throw new AssertionError(where + " (" + resource.getKind() + "/" + resource.getMetadata().getName()
                    + "): unknown fields " + unknown);
            }
            documents.add(new Document(file, index, resource));
            index++;
        }
        return documents;
    }

    /** The paths of every field fabric8 did not recognise, e.g. {@code spec.template.spec.containers[0].imagPullPolicy}. */
    public static List<String> unknownFields(final Object root)
    {
        final List<String> unknown = new ArrayList<>();
        walk(root, "", unknown, new IdentityHashMap<>());
        return unknown;
    }

    private static void walk(final Object node, final String path, final List<String> unknown, final Map<Object, Boolean> seen)
    {
        if (node == null || seen.put(node, Boolean.TRUE) != null)
        {
            return;
        }
        if (node instanceof Collection<?> collection)
        {
            int i = 0;
            for (final Object element : collection)
            {
                walk(element, path + "[" + i++ + "]", unknown, seen);
            }
            return;
        }
        if (node instanceof Map<?, ?> map)
        {
            map.forEach((key, value) -> walk(value, path + "[" + key + "]", unknown, seen));
            return;
        }
        if (!node.getClass().getName().startsWith("io.fabric8.kubernetes.api.model"))
        {
            return;
        }
        for (final Method method : node.getClass().getMethods())
        {
            if (method.getParameterCount() != 0 || Modifier.isStatic(method.getModifiers())
                || method.getDeclaringClass() == Object.class)
            {
                continue;
            }
            final String name = method.getName();
            if (name.equals("getAdditionalProperties"))
            {
                final Object extra = invoke(method, node);
                if (extra instanceof Map<?, ?> map && !map.isEmpty())
                {
                    map.keySet().forEach(key -> unknown.add(join(path, String.valueOf(key))));
                }
            }
            else if (name.startsWith("get") && name.length() > 3)
            {
                final Object value = invoke(method, node);
                walk(value, join(path, Character.toLowerCase(name.charAt(3)) + name.substring(4)), unknown, seen);
            }
        }
    }

    private static String join(final String path, final String field)
    {
        return path.isEmpty() ? field : path + "." + field;
    }

    private static Object invoke(final Method method, final Object target)
    {
        try
        {
            return method.invoke(target);
        }
        catch (final IllegalAccessException | InvocationTargetException ex)
        {
            return null;
        }
    }

    /** The one resource of a type among {@code documents}; fails when there is none or more than one. */
    public static <T extends HasMetadata> T only(final List<Document> documents, final Class<T> type)
    {
        final List<Document> matching = documents.stream().filter(document -> type.isInstance(document.resource())).toList();
        if (matching.size() != 1)
        {
            throw new AssertionError("expected exactly one " + type.getSimpleName() + " in dist/kubernetes, found "
                + matching.stream().map(Document::describe).toList());
        }
        return type.cast(matching.get(0).resource());
    }

    /** The resource of a type and name among {@code documents}; fails when there is none. */
    public static <T extends HasMetadata> T named(final List<Document> documents, final Class<T> type, final String name)
    {
        return documents.stream().map(Document::resource).filter(type::isInstance).map(type::cast)
            .filter(resource -> Objects.equals(resource.getMetadata().getName(), name)).findFirst()
            .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " named " + name + " in dist/kubernetes"));
    }

    /** The pod template of a workload, with a label saying which. */
    public static Optional<PodTemplateSpec> podTemplate(final HasMetadata resource)
    {
        if (resource instanceof Deployment deployment)
        {
            return Optional.ofNullable(deployment.getSpec().getTemplate());
        }
        if (resource instanceof StatefulSet statefulSet)
        {
            return Optional.ofNullable(statefulSet.getSpec().getTemplate());
        }
        if (resource instanceof Job job)
        {
            return Optional.ofNullable(job.getSpec().getTemplate());
        }
        if (resource instanceof CronJob cronJob)
        {
            return Optional.ofNullable(cronJob.getSpec().getJobTemplate().getSpec().getTemplate());
        }
        return Optional.empty();
    }

    /** Every container (init containers included) of a pod template. */
    public static List<Container> containers(final PodTemplateSpec template)
    {
        final List<Container> containers = new ArrayList<>();
        if (template.getSpec().getInitContainers() != null)
        {
            containers.addAll(template.getSpec().getInitContainers());
        }
        if (template.getSpec().getContainers() != null)
        {
            containers.addAll(template.getSpec().getContainers());
        }
        return containers;
    }

    private static Path locate()
    {
        // dist's tests run in dist/, qa's in qa/
        for (final Path candidate : List.of(Path.of("kubernetes"), Path.of("dist/kubernetes"), Path.of("../dist/kubernetes")))
        {
            if (Files.isDirectory(candidate) && Files.exists(candidate.resolve("brokers.yaml")))
            {
                return candidate.toAbsolutePath().normalize();
            }
        }
        throw new IllegalStateException("dist/kubernetes not found from " + Path.of("").toAbsolutePath());
    }
}
