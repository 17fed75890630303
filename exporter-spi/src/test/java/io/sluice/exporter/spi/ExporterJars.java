package io.sluice.exporter.spi;

import org.agrona.DirectBuffer;

import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.StandardLocation;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

/**
 * Builds a third-party exporter jar at test time, as an operator would: sources compiled (javax.tools) against the
 * exporter SPI and Agrona only, then packed into a jar. For tests in any module.
 */
public final class ExporterJars
{
    public static final String AUDIT_EXPORTER = "com.example.audit.AuditExporter";

    private ExporterJars()
    {
    }

    /**
     * Compiles {@code sources} (fully qualified class name to Java source) and writes them to
     * {@code <directory>/<jarName>}, which it returns.
     *
     * @throws IllegalStateException with the compiler's messages when a source does not compile.
     */
    public static Path build(final Path directory, final String jarName, final Map<String, String> sources)
        throws IOException
    {
        final Path sourceDir = Files.createDirectories(directory.resolve(jarName + "-src"));
        final Path classDir = Files.createDirectories(directory.resolve(jarName + "-classes"));
        final List<Path> files = new ArrayList<>();
        for (final Map.Entry<String, String> source : sources.entrySet())
        {
            final Path file = sourceDir.resolve(source.getKey().replace('.', '/') + ".java");
            Files.createDirectories(file.getParent());
            Files.writeString(file, source.getValue());
            files.add(file);
        }

        final JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        if (compiler == null)
        {
            throw new IllegalStateException("no Java compiler in this runtime (a JDK is needed, not a JRE)");
        }
        final StringWriter messages = new StringWriter();
        try (StandardJavaFileManager fileManager = compiler.getStandardFileManager(null, null, null))
        {
            fileManager.setLocation(StandardLocation.CLASS_PATH, List.of(codeSource(Exporter.class).toFile(),
                codeSource(DirectBuffer.class).toFile()));
            fileManager.setLocation(StandardLocation.CLASS_OUTPUT, List.of(classDir.toFile()));
            final Iterable<? extends JavaFileObject> units = fileManager.getJavaFileObjectsFromPaths(files);
            final Boolean compiled = compiler.getTask(messages, fileManager, null, List.of("--release", "17"), null, units)
                .call();
            if (!Boolean.TRUE.equals(compiled))
            {
                throw new IllegalStateException("exporter sources do not compile:\n" + messages);
            }
        }

        final Path jar = directory.resolve(jarName);
        final Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        try (OutputStream out = Files.newOutputStream(jar);
             JarOutputStream jarOut = new JarOutputStream(out, manifest);
             Stream<Path> classes = Files.walk(classDir))
        {
            for (final Path file : (Iterable<Path>)classes.filter(Files::isRegularFile).sorted()::iterator)
            {
                jarOut.putNextEntry(new JarEntry(classDir.relativize(file).toString().replace('\\', '/')));
                Files.copy(file, jarOut);
                jarOut.closeEntry();
            }
        }
        return jar;
    }

    /**
     * The audit exporter of this module's test resources ({@code third-party-exporter/com/example/audit/AuditExporter.java}):
     * class {@value #AUDIT_EXPORTER}, arg {@code out} (required) the folder it writes {@code partition-<id>.jsonl} and
     * {@code probe-<id>.txt} (per probed class name: {@code visible} or {@code hidden} to its own class loader, then
     * to the thread's context class loader) to. Returns the jar.
     */
    public static Path buildAuditExporter(final Path directory) throws IOException
    {
        final String resource = "third-party-exporter/" + AUDIT_EXPORTER.replace('.', '/') + ".java";
        try (java.io.InputStream in = ExporterJars.class.getClassLoader().getResourceAsStream(resource))
        {
            if (in == null)
            {
                throw new IllegalStateException(resource + " is not on the class path");
            }
            return build(directory, "audit-exporter.jar",
                Map.of(AUDIT_EXPORTER, new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)));
        }
    }

    /** Where a class was loaded from (a jar or a classes folder). */
    public static Path codeSource(final Class<?> type)
    {
        try
        {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        }
        catch (final URISyntaxException e)
        {
            throw new UncheckedIOException(new IOException(type + ": " + e.getMessage(), e));
        }
    }
}
