package io.sluice.qa.container;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The images of the qa container tests, built with no container registry:
 * <ul>
 *   <li>the JRE 17 base, {@value #BASE_IMAGE}: a minimal Debian bookworm made by debootstrap from the apt mirror
 *   this machine already uses, with openjdk-17-jre-headless, imported into podman. It stays in podman's storage,
 *   so later runs skip this step (remove the image to rebuild it). Needs root (debootstrap, chroot);</li>
 *   <li>the Sluice image: {@code dist/docker/Dockerfile} built on that base with {@code --pull=never}.</li>
 * </ul>
 */
final class ContainerImages
{
    static final String BASE_IMAGE = "localhost/sluice-qa-jre17:bookworm";
    private static final String SUITE = "bookworm";
    private static final String DEFAULT_MIRROR = "http://deb.debian.org/debian";
    private static final Duration DEBOOTSTRAP_TIMEOUT = Duration.ofMinutes(10);
    private static final Duration STEP_TIMEOUT = Duration.ofMinutes(5);

    private final Podman podman;
    private final Path folder;
    /** What building the base cost, or empty when it was in podman's storage already. */
    private Optional<String> baseTimings = Optional.empty();

    /** {@code folder}: where the base's chroot is made (and deleted once imported). */
    ContainerImages(final Podman podman, final Path folder)
    {
        this.podman = podman;
        this.folder = folder;
    }

    Optional<String> baseTimings()
    {
        return baseTimings;
    }

    boolean exists(final String image)
    {
        return podman.podman(Duration.ofSeconds(60), "image", "exists", image).ok();
    }

    /** Why the base image cannot be built here (when it is missing), or empty. */
    Optional<String> whyBaseCannotBeBuilt()
    {
        if (exists(BASE_IMAGE))
        {
            return Optional.empty();
        }
        if (!"root".equals(System.getProperty("user.name")))
        {
            return Optional.of("the JRE base image " + BASE_IMAGE + " is missing and building it (debootstrap, chroot) needs root");
        }
        for (final String tool : List.of("debootstrap", "chroot", "mount", "umount", "tar"))
        {
            if (!Podman.onPath(tool))
            {
                return Optional.of("the JRE base image " + BASE_IMAGE + " is missing and " + tool + " is not installed");
            }
        }
        return Optional.empty();
    }

    /** Builds {@value #BASE_IMAGE} unless podman has it already. */
    void ensureBase()
    {
        if (exists(BASE_IMAGE))
        {
            return;
        }
        try
        {
            Files.createDirectories(folder);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create " + folder, ex);
        }
        final Path rootfs = folder.resolve("base-rootfs");
        final Path proc = rootfs.resolve("proc");
        unmountIfMounted(proc);
        deleteTree(rootfs);
        final String mirror = aptMirror();
        final long start = System.nanoTime();
        podman.run(DEBOOTSTRAP_TIMEOUT, List.of(tool("debootstrap"), "--variant=minbase", SUITE, rootfs.toString(), mirror))
            .checked();
        final long bootstrapped = System.nanoTime();
        try
        {
            Files.copy(Path.of("/etc/resolv.conf"), rootfs.resolve("etc/resolv.conf"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            podman.run(STEP_TIMEOUT, List.of(tool("mount"), "-t", "proc", "proc", proc.toString())).checked();
            try
            {
                podman.run(STEP_TIMEOUT, List.of(tool("chroot"), rootfs.toString(), "/bin/sh", "-c",
                    "export DEBIAN_FRONTEND=noninteractive && apt-get update -qq"
                        + " && apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless"
                        + " && apt-get clean && rm -rf /var/lib/apt/lists/*")).checked();
            }
            finally
            {
                unmountIfMounted(proc);
            }
            Files.delete(rootfs.resolve("etc/resolv.conf"));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot prepare the chroot " + rootfs, ex);
        }
        final long installed = System.nanoTime();
        final String javaHome = javaHome(rootfs);
        // tar of the tree (numeric owners, as in the chroot) straight into podman: no intermediate file.
        podman.run(STEP_TIMEOUT, List.of("sh", "-c", "tar --numeric-owner -C \"$0\" -c . | \"$3\" import"
            + " --change \"ENV JAVA_HOME=$1\" --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'"
            + " --change 'CMD [\"/bin/bash\"]' - \"$2\"", rootfs.toString(), javaHome, BASE_IMAGE, Podman.PROGRAM)).checked();
        final long imported = System.nanoTime();
        if (!mounted(proc))
        {
            deleteTree(rootfs);
        }
        baseTimings = Optional.of(String.format("debootstrap %.1f s, openjdk-17-jre-headless %.1f s, import %.1f s (mirror %s)",
            seconds(bootstrapped - start), seconds(installed - bootstrapped), seconds(imported - installed), mirror));
    }

    /**
     * Builds {@code dist/docker/Dockerfile} on the local base as {@code tag}, and removes the image the tag named
     * before (each build of the jar makes a new one) so that runs do not pile images up; returns the seconds it took.
     */
    double buildSluice(final Path repository, final String tag)
    {
        final Podman.Result previous = podman.podman(Duration.ofSeconds(60), "image", "inspect", "--format", "{{.Id}}", tag);
        final long start = System.nanoTime();
        podman.podman(STEP_TIMEOUT, "build", "--pull=never", "--build-arg", "BASE_IMAGE=" + BASE_IMAGE,
            "-f", repository.resolve("dist/docker/Dockerfile").toString(), "-t", tag, repository.toString()).checked();
        final double seconds = seconds(System.nanoTime() - start);
        final String built = podman.podman(Duration.ofSeconds(60), "image", "inspect", "--format", "{{.Id}}", tag)
            .checked().out().strip();
        if (previous.ok() && !previous.out().strip().equals(built))
        {
            podman.podman(Duration.ofSeconds(60), "rmi", previous.out().strip()); // fails harmlessly while a container uses it
        }
        return seconds;
    }

    /** The size of an image in bytes, as podman reports it. */
    long size(final String image)
    {
        return Long.parseLong(podman.podman(Duration.ofSeconds(60), "image", "inspect", "--format", "{{.Size}}", image)
            .checked().out().strip());
    }

    /** The Debian mirror apt uses here (deb822 .sources or sources.list), for bookworm; else deb.debian.org. */
    static String aptMirror()
    {
        final List<Path> files = new ArrayList<>();
        final Path list = Path.of("/etc/apt/sources.list");
        if (Files.isRegularFile(list))
        {
            files.add(list);
        }
        try (Stream<Path> parts = Files.isDirectory(Path.of("/etc/apt/sources.list.d"))
            ? Files.list(Path.of("/etc/apt/sources.list.d")) : Stream.empty())
        {
            parts.sorted().forEach(files::add);
        }
        catch (final IOException ex)
        {
            return DEFAULT_MIRROR;
        }
        final Pattern oneLine = Pattern.compile("^deb\\s+(?:\\[[^]]*]\\s+)?(\\S+)\\s+" + SUITE + "\\s", Pattern.MULTILINE);
        final Pattern stanza = Pattern.compile("(?m)^URIs:\\s*(\\S+)\\s*$[\\s\\S]*?^Suites:([^\\n]*)$");
        for (final Path file : files)
        {
            final String text;
            try
            {
                text = Files.readString(file);
            }
            catch (final IOException ex)
            {
                continue;
            }
            final Matcher line = oneLine.matcher(text);
            if (line.find())
            {
                return line.group(1);
            }
            final Matcher deb822 = stanza.matcher(text);
            while (deb822.find())
            {
                if (List.of(deb822.group(2).trim().split("\\s+")).contains(SUITE))
                {
                    return deb822.group(1);
                }
            }
        }
        return DEFAULT_MIRROR;
    }

    private static String javaHome(final Path rootfs)
    {
        try (Stream<Path> jvms = Files.list(rootfs.resolve("usr/lib/jvm")))
        {
            return "/" + rootfs.relativize(jvms.filter(Files::isDirectory).filter(path -> !Files.isSymbolicLink(path))
                .filter(path -> path.getFileName().toString().startsWith("java-17-openjdk-")).findFirst()
                .orElseThrow(() -> new AssertionError("no java-17-openjdk-* in the chroot's /usr/lib/jvm")));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private void unmountIfMounted(final Path mountPoint)
    {
        if (mounted(mountPoint))
        {
            podman.run(STEP_TIMEOUT, List.of(tool("umount"), mountPoint.toString())).checked();
        }
    }

    private static boolean mounted(final Path mountPoint)
    {
        try
        {
            final String target = " " + mountPoint.toAbsolutePath() + " ";
            return Files.readAllLines(Path.of("/proc/mounts")).stream().anyMatch(line -> line.contains(target));
        }
        catch (final IOException ex)
        {
            return true; // unknown: never delete a tree that may hold a mount
        }
    }

    /** Deletes a chroot with rm (it holds files no Java walk should need to understand: devices, odd modes). */
    private void deleteTree(final Path tree)
    {
        if (Files.exists(tree))
        {
            podman.run(STEP_TIMEOUT, List.of("rm", "-rf", "--one-file-system", tree.toString())).checked();
        }
    }

    private static String tool(final String name)
    {
        return Podman.find(name).map(Path::toString).orElse(name);
    }

    private static double seconds(final long nanos)
    {
        return nanos / 1e9;
    }
}
