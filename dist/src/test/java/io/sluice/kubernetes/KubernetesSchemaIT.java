package io.sluice.kubernetes;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The manifests against the Kubernetes OpenAPI schemas (npm kubernetes-models, pinned by the committed
 * package-lock.json in src/test/kubernetes-schema): types and required fields, which the fabric8 model
 * does not check. Installs the packages itself with {@code npm ci} into target/kubernetes-schema;
 * skipped only when node or npm is not installed.
 */
@Timeout(600)
class KubernetesSchemaIT
{
    private static final Path SOURCE = Manifests.DIRECTORY.resolveSibling("src/test/kubernetes-schema");
    private static final Path WORK = Manifests.DIRECTORY.resolveSibling("target/kubernetes-schema");

    @BeforeAll
    static void installSchemas() throws Exception
    {
        assumeTrue(onPath("npm") && onPath("node"), "node and npm are not installed: schema check skipped");
        Files.createDirectories(WORK);
        boolean changed = false;
        for (final String name : List.of("package.json", "package-lock.json", "validate.mjs"))
        {
            final Path target = WORK.resolve(name);
            final byte[] source = Files.readAllBytes(SOURCE.resolve(name));
            if (!Files.exists(target) || !java.util.Arrays.equals(source, Files.readAllBytes(target)))
            {
                Files.copy(SOURCE.resolve(name), target, StandardCopyOption.REPLACE_EXISTING);
                changed |= !name.endsWith(".mjs");
            }
        }
        if (changed || !Files.exists(WORK.resolve("node_modules/kubernetes-models/package.json")))
        {
            final Run install = run(WORK, 300, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error");
            assertThat(install.exitCode()).as("npm ci in " + WORK + ":\n" + install.output()).isZero();
        }
    }

    @Test
    void everyManifestMatchesTheKubernetesSchemas() throws Exception
    {
        final List<String> command = new ArrayList<>(List.of("node", "validate.mjs"));
        Manifests.files().forEach(file -> command.add(file.toString()));

        final Run validation = run(WORK, 120, command.toArray(String[]::new));

        assertThat(validation.exitCode()).as(validation.output()).isZero();
        assertThat(validation.output().lines().filter(line -> line.startsWith("ok ")).count())
            .isEqualTo(Manifests.loadAll().size());
    }

    @Test
    void aStringWhereAnIntegerGoesIsCaught(@TempDir final Path temp) throws Exception
    {
        final Path manifest = temp.resolve("bad.yaml");
        Files.writeString(manifest, Files.readString(Manifests.DIRECTORY.resolve("brokers.yaml"))
            .replace("  replicas: 3", "  replicas: \"3\""));

        final Run validation = run(WORK, 120, "node", "validate.mjs", manifest.toString());

        assertThat(validation.exitCode()).isEqualTo(1);
        assertThat(validation.output()).contains("error bad.yaml#1 StatefulSet/sluice-broker").contains("replicas must be integer");
    }

    record Run(int exitCode, String output)
    {
    }

    private static Run run(final Path dir, final int timeoutSeconds, final String... command) throws Exception
    {
        final Path output = Files.createTempFile("schema-check", ".log");
        try
        {
            final Process process = new ProcessBuilder(command).directory(dir.toFile())
                .redirectErrorStream(true).redirectOutput(output.toFile()).start();
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                throw new AssertionError(String.join(" ", command) + " did not end within " + timeoutSeconds + "s");
            }
            return new Run(process.exitValue(), Files.readString(output));
        }
        finally
        {
            Files.deleteIfExists(output);
        }
    }

    private static boolean onPath(final String program) throws IOException
    {
        for (final String dir : System.getenv().getOrDefault("PATH", "").split(":"))
        {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program)))
            {
                return true;
            }
        }
        return false;
    }
}
