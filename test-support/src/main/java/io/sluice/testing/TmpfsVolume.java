package io.sluice.testing;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A small tmpfs mounted on a directory, for tests of what a broker does when its volume fills: only a volume of its
 * own can be filled without filling the machine. Mounting needs root; {@link #mount} says whether it worked so the
 * test can skip, saying why.
 */
public final class TmpfsVolume
{
    private TmpfsVolume()
    {
    }

    /** Mounts a tmpfs of {@code size} ("64m") on {@code directory}, which must exist; returns mount's exit code. */
    public static int mount(final Path directory, final String size) throws IOException, InterruptedException
    {
        return run("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", directory.toString());
    }

    /** Unmounts lazily: a process still holding a file there (a broker being killed) does not keep it mounted. */
    public static void unmount(final Path directory) throws IOException, InterruptedException
    {
        run("umount", "-l", directory.toString());
    }

    private static int run(final String... command) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!process.waitFor(30, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            return -1;
        }
        return process.exitValue();
    }
}
