package io.sluice.broker.exporter;

import io.sluice.exporter.spi.CommittedRecord;
import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterController;
import io.sluice.protocol.cluster.InvalidClusterConfigException;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Modifier;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;
import java.util.jar.JarFile;

/**
 * Loads third-party exporters ({@code sluice.exporters.<id>.class-name} from {@code sluice.exporters.<id>.jar}), each
 * exporter id in a class loader of its own that sees the jar, the exporter SPI ({@code io.sluice.exporter.spi}),
 * Agrona (the SPI's record view exposes an Agrona buffer) and the JDK, and nothing else of the broker: the
 * exporter cannot come to depend on broker internals, nor clash with the broker's own libraries (it brings its own
 * in its jar). Calls into the exporter run with that loader as the thread's context class loader, for libraries
 * that look classes up through it. Thread-safe.
 */
final class ThirdPartyExporters
{
    /** Packages the exporter's class loader takes from the broker; everything else comes from the jar or the JDK. */
    static final List<String> SHARED_PACKAGES = List.of("io.sluice.exporter.spi.", "org.agrona.");

    private ThirdPartyExporters()
    {
    }

    /**
     * Opens the jar and checks the class: found, a concrete {@link Exporter}, with a public no-argument
     * constructor. Returns a factory of instances that run under the jar's class loader.
     *
     * @throws InvalidClusterConfigException naming {@code .jar} or {@code .class-name}.
     */
    static Supplier<Exporter> load(final ExporterConfig config)
    {
        final String className = config.properties().get(ExporterConfig.CLASS_NAME);
        final String jarSetting = config.setting(ExporterConfig.JAR);
        final String classSetting = config.setting(ExporterConfig.CLASS_NAME);
        if (className == null || className.isBlank())
        {
            throw new InvalidClusterConfigException(classSetting, "required for a third-party exporter");
        }
        final String jarValue = config.properties().get(ExporterConfig.JAR);
        if (jarValue == null || jarValue.isBlank())
        {
            throw new InvalidClusterConfigException(jarSetting, "required with " + classSetting +
                " (the jar holding " + className + ")");
        }
        final Path jar = Path.of(jarValue).toAbsolutePath().normalize();
        if (!Files.isRegularFile(jar) || !Files.isReadable(jar))
        {
            throw new InvalidClusterConfigException(jarSetting, "no readable file " + jar);
        }
        try (JarFile ignored = new JarFile(jar.toFile()))
        {
            // opened only to refuse a file that is not a jar here, rather than as a missing class later
        }
        catch (final IOException e)
        {
            throw new InvalidClusterConfigException(jarSetting, jar + " is not a jar: " + e.getMessage());
        }

        final URLClassLoader loader = new URLClassLoader("exporter-" + config.id(), new URL[] {url(jar)},
            new SpiOnlyClassLoader(Exporter.class.getClassLoader()));
        final Class<?> type;
        try
        {
            type = Class.forName(className.trim(), false, loader);
        }
        catch (final ClassNotFoundException e)
        {
            throw new InvalidClusterConfigException(classSetting, "class " + className + " not found in " + jar);
        }
        catch (final LinkageError e)
        {
            throw new InvalidClusterConfigException(classSetting, "cannot load " + className + " from " + jar +
                ": " + e);
        }
        if (!Exporter.class.isAssignableFrom(type))
        {
            throw new InvalidClusterConfigException(classSetting, className + " does not implement " +
                Exporter.class.getName());
        }
        if (type.isInterface() || Modifier.isAbstract(type.getModifiers()) || !Modifier.isPublic(type.getModifiers()))
        {
            throw new InvalidClusterConfigException(classSetting, className + " is not a public concrete class");
        }
        final Constructor<?> constructor;
        try
        {
            constructor = type.getConstructor();
        }
        catch (final NoSuchMethodException e)
        {
            throw new InvalidClusterConfigException(classSetting, className + " has no public no-argument constructor");
        }
        return () -> new ContextClassLoaderExporter(newInstance(constructor, config), loader);
    }

    private static Exporter newInstance(final Constructor<?> constructor, final ExporterConfig config)
    {
        final Thread thread = Thread.currentThread();
        final ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(constructor.getDeclaringClass().getClassLoader());
        try
        {
            return (Exporter)constructor.newInstance();
        }
        catch (final ReflectiveOperationException e)
        {
            final Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new IllegalStateException("exporter " + config.id() + ": " + constructor.getDeclaringClass().getName() +
                " could not be created: " + cause, cause);
        }
        finally
        {
            thread.setContextClassLoader(previous);
        }
    }

    private static URL url(final Path jar)
    {
        try
        {
            return jar.toUri().toURL();
        }
        catch (final MalformedURLException e)
        {
            throw new IllegalArgumentException(jar + ": " + e.getMessage(), e);
        }
    }

    /**
     * The parent of an exporter's class loader: the JDK's classes (through the platform class loader) and the
     * {@link #SHARED_PACKAGES} from the broker's loader; any other class is not found, so a broker class referenced
     * by the exporter fails with {@link ClassNotFoundException} or {@link NoClassDefFoundError}.
     */
    static final class SpiOnlyClassLoader extends ClassLoader
    {
        static
        {
            registerAsParallelCapable();
        }

        private final ClassLoader brokerLoader;

        SpiOnlyClassLoader(final ClassLoader brokerLoader)
        {
            super("exporter-spi", ClassLoader.getPlatformClassLoader());
            this.brokerLoader = brokerLoader;
        }

        @Override
        protected Class<?> loadClass(final String name, final boolean resolve) throws ClassNotFoundException
        {
            for (final String shared : SHARED_PACKAGES)
            {
                if (name.startsWith(shared))
                {
                    return brokerLoader.loadClass(name);
                }
            }
            return super.loadClass(name, resolve);
        }
    }

    /**
     * Runs every call of a third-party exporter with its own class loader as the thread's context class loader, and
     * turns a {@link LinkageError} (a class the exporter needs but may not see) into an exception, so the director
     * shows the exporter as retrying with that message instead of failing as a whole.
     */
    private static final class ContextClassLoaderExporter implements Exporter
    {
        private final Exporter exporter;
        private final ClassLoader loader;

        ContextClassLoaderExporter(final Exporter exporter, final ClassLoader loader)
        {
            this.exporter = exporter;
            this.loader = loader;
        }

        @Override
        public void configure(final ExporterContext context) throws Exception
        {
            run(() -> exporter.configure(context));
        }

        @Override
        public void open(final ExporterController controller) throws Exception
        {
            run(() -> exporter.open(controller));
        }

        @Override
        public void export(final CommittedRecord record) throws Exception
        {
            run(() -> exporter.export(record));
        }

        @Override
        public void flush() throws Exception
        {
            run(exporter::flush);
        }

        @Override
        public void close() throws Exception
        {
            run(exporter::close);
        }

        private void run(final Call call) throws Exception
        {
            final Thread thread = Thread.currentThread();
            final ClassLoader previous = thread.getContextClassLoader();
            thread.setContextClassLoader(loader);
            try
            {
                call.run();
            }
            catch (final LinkageError e)
            {
                throw new IllegalStateException(exporter.getClass().getName() + ": " + e, e);
            }
            finally
            {
                thread.setContextClassLoader(previous);
            }
        }

        @Override
        public String toString()
        {
            return exporter.toString();
        }
    }

    @FunctionalInterface
    private interface Call
    {
        void run() throws Exception;
    }
}
