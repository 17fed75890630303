package io.sluice.qa.operator;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.SluiceCluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** A {@code backup-hook.sh} child process: waiting for what its backup command writes and for its exit. */
final class Hooks
{
    static final Duration HOOK_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(180));
    static final Duration BACKUP_START_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(120));

    private Hooks()
    {
    }

    /** Waits for a file the backup command writes; fails early, with the hook's stderr, if the hook ends first. */
    static void awaitFile(final Process hook, final Path file, final Path hookStderr)
    {
        Await.until(file + " written by the backup command", BACKUP_START_TIMEOUT, () ->
        {
            if (Files.exists(file))
            {
                return true;
            }
            if (!hook.isAlive())
            {
                throw new AssertionError("the hook exited " + hook.exitValue() + " before the backup ran; stderr: " +
                    read(hookStderr));
            }
            return false;
        });
    }

    /** The hook's exit code; fails, with its stderr, if it runs longer than {@link #HOOK_TIMEOUT}. */
    static int awaitExit(final Process hook, final Path hookStderr) throws InterruptedException
    {
        if (!hook.waitFor(HOOK_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
        {
            hook.destroyForcibly();
            throw new AssertionError("backup hook still running after " + HOOK_TIMEOUT + "; stderr: " + read(hookStderr));
        }
        return hook.exitValue();
    }

    /** A file's text, or "" if it does not exist (yet). */
    static String read(final Path file)
    {
        try
        {
            return Files.exists(file) ? Files.readString(file) : "";
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read " + file, ex);
        }
    }
}
