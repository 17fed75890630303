package io.sluice.qa.cluster;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The harness's signals on a plain child ({@code sleep}), no Sluice needed. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class SluiceProcessIT
{
    @TempDir
    Path directory;

    @Test
    void suspendResumeAndKillReachTheChild() throws Exception
    {
        final SluiceProcess child = new SluiceProcess("sleeper", List.of("sleep", "600"), directory,
            directory.resolve("logs/sleeper.log"), directory.resolve("pids"));
        child.start();
        try
        {
            // suspend() returns only once the kernel shows the child stopped, not merely once the signal is sent
            child.suspend();
            assertThat(processState(child.pid())).isEqualTo('T');
            child.resume();
            assertThat(processState(child.pid())).isIn('S', 'R');

            child.kill();
            assertThat(child.isAlive()).isFalse();
            assertThat(child.wasKilledOnPurpose()).isTrue();
            assertThat(child.log()).contains("starting sleeper", "sent SIGSTOP", "sent SIGCONT");
            assertThat(Files.readString(directory.resolve("pids"))).startsWith(child.pid() + " sleeper");
        }
        finally
        {
            child.kill();
        }
    }

    @Test
    void stopSendsSigtermAndReportsTheExitCode()
    {
        final SluiceProcess child = new SluiceProcess("sleeper", List.of("sleep", "600"), directory,
            directory.resolve("sleeper.log"), null);
        child.start();
        assertThat(child.stop(Duration.ofSeconds(10))).isEqualTo(143);
    }

    @Test
    void leftoversOfACrashedRunAreKilledByPid() throws Exception
    {
        final Path run = directory.resolve("run");
        final SluiceProcess orphan = new SluiceProcess("orphan",
            List.of("sh", "-c", "sleep 600 # " + run), directory, directory.resolve("orphan.log"), run.resolve("pids"));
        Files.createDirectories(run);
        orphan.start();

        SluiceProcess.killLeftovers(run.resolve("pids"), run);

        assertThat(orphan.awaitExit(Duration.ofSeconds(10))).isTrue();
    }

    private static char processState(final long pid)
    {
        return SluiceProcess.processState(Path.of("/proc", Long.toString(pid), "stat"));
    }
}
