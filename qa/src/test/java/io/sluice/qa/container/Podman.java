package io.sluice.qa.container;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Runs podman (and the few root tools that build a base image offline) as child processes, each with a bounded
 * wait and its output in files. Every podman call gets a {@code containers.conf} of its own
 * ({@code CONTAINERS_CONF}) with the two settings a sandboxed machine needs: the runc runtime (crun refuses a
 * hybrid cgroup layout) when runc is installed, and container rlimits no higher than this process's own (raising
 * them needs CAP_SYS_RESOURCE, which a sandbox may not grant). Both are harmless on an ordinary machine.
 */
final class Podman
{
    /** The podman program: system property {@code sluice.qa.podman} (a name on PATH or a path), default podman. */
    static final String PROGRAM = System.getProperty("sluice.qa.podman", "podman");
    private static final int NPROC_CAP = 32_768;

    private final Path folder;
    private final Path containersConf;

    /** The outcome of one command. */
    record Result(List<String> command, int exitCode, String out, String err)
    {
        boolean ok()
        {
            return exitCode == 0;
        }

        /** This result; an AssertionError naming the command and its stderr when it failed. */
        Result checked()
        {
            if (exitCode != 0)
            {
                throw new AssertionError(String.join(" ", command) + " exited " + exitCode + ": " + err.strip()
                    + (out.isBlank() ? "" : "\nstdout: " + out.strip()));
            }
            return this;
        }
    }

    Podman(final Path folder)
    {
        this.folder = folder;
        try
        {
            Files.createDirectories(folder);
            containersConf = folder.resolve("containers.conf");
            final StringBuilder conf = new StringBuilder()
                .append("# written by the qa container tests\n")
                .append("[containers]\n")
                .append("default_ulimits = [\"nofile=").append(limit("Max open files", Long.MAX_VALUE)).append(':')
                .append(limit("Max open files", Long.MAX_VALUE)).append("\", \"nproc=")
                .append(limit("Max processes", NPROC_CAP)).append(':').append(limit("Max processes", NPROC_CAP))
                .append("\"]\n");
            if (onPath("runc"))
            {
                conf.append("[engine]\nruntime = \"runc\"\n");
            }
            Files.writeString(containersConf, conf.toString());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write a containers.conf in " + folder, ex);
        }
    }

    /** {@code podman args...}. */
    Result podman(final Duration timeout, final String... args)
    {
        return podman(timeout, List.of(args));
    }

    Result podman(final Duration timeout, final List<String> args)
    {
        final List<String> command = new ArrayList<>();
        command.add(PROGRAM);
        command.addAll(args);
        return run(timeout, command);
    }

    /** Any command, with this podman configuration in its environment (for pipelines into podman). */
    Result run(final Duration timeout, final List<String> command)
    {
        try
        {
            final Path out = Files.createTempFile(folder, "out", ".txt");
            final Path err = Files.createTempFile(folder, "err", ".txt");
            try
            {
                final ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(out.toFile()).redirectError(err.toFile());
                builder.environment().put("CONTAINERS_CONF", containersConf.toString());
                final Process process = builder.start();
                if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
                {
                    process.descendants().forEach(ProcessHandle::destroyForcibly);
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                    return new Result(command, -1, Files.readString(out, StandardCharsets.UTF_8),
                        "timed out after " + timeout + "; " + Files.readString(err, StandardCharsets.UTF_8));
                }
                return new Result(command, process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
            }
            finally
            {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        }
        catch (final IOException ex)
        {
            return new Result(command, -1, "", "cannot run " + command + ": " + ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + command, ex);
        }
    }

    /** Why this machine cannot run podman, or empty when it can. */
    Optional<String> whyUnusable()
    {
        if (!onPath(PROGRAM))
        {
            return Optional.of(PROGRAM + " is not installed (apt-get install podman buildah runc debootstrap)");
        }
        final Result info = podman(Duration.ofSeconds(60), "info");
        if (!info.ok())
        {
            return Optional.of("'podman info' failed (exit " + info.exitCode() + "): " + firstLines(info.err()));
        }
        return Optional.empty();
    }

    static boolean onPath(final String program)
    {
        return find(program).isPresent();
    }

    /** A program on PATH, or in the sbin directories a non-login root shell may lack on its PATH. */
    static Optional<Path> find(final String program)
    {
        if (program.contains("/"))
        {
            return Files.isExecutable(Path.of(program)) ? Optional.of(Path.of(program)) : Optional.empty();
        }
        final List<String> dirs = new ArrayList<>(
            List.of(System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)));
        dirs.addAll(List.of("/usr/sbin", "/sbin"));
        return dirs.stream().filter(dir -> !dir.isEmpty()).map(dir -> Path.of(dir, program))
            .filter(Files::isExecutable).findFirst();
    }

    static String firstLines(final String text)
    {
        return text.strip().lines().limit(5).reduce((a, b) -> a + " | " + b).orElse("(no output)");
    }

    /** This process's hard limit of a resource (as /proc/self/limits names it), at most {@code cap}. */
    private static long limit(final String name, final long cap) throws IOException
    {
        for (final String line : Files.readAllLines(Path.of("/proc/self/limits")))
        {
            if (line.startsWith(name))
            {
                final String[] words = line.substring(name.length()).trim().split("\\s+");
                final long hard = words[1].equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(words[1]);
                return Math.min(hard, cap == Long.MAX_VALUE ? 1_048_576 : cap);
            }
        }
        return Math.min(cap, 1024);
    }
}
