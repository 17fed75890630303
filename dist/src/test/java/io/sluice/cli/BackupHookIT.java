package io.sluice.cli;

import io.sluice.protocol.cluster.PartitionReplica;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

@Timeout(120)
class BackupHookIT
{
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path temp;

    @Test
    void pausesRunsTheBackupAndResumes() throws Exception
    {
        final BackupHook hook = new BackupHook(temp).withRecordingCli(0, 0);
        final Path marker = temp.resolve("backup-ran");

        final int exit = hook.run(RUN_TIMEOUT, "--soft", "--retries", "5", "--gateway", "http://gw:9600",
            "--", "touch", marker.toString());

        assertThat(exit).as(hook.err()).isZero();
        assertThat(marker).exists();
        assertThat(hook.calls()).containsExactly(
            "admin exporting pause --soft --retries 5 --gateway http://gw:9600",
            "admin exporting resume --retries 5 --gateway http://gw:9600");
    }

    @Test
    void resumesWhenTheBackupCommandFailsAndNamesIt() throws Exception
    {
        final BackupHook hook = new BackupHook(temp).withRecordingCli(0, 0);

        final int exit = hook.run(RUN_TIMEOUT, "--", "sh", "-c", "exit 7");

        assertThat(exit).isEqualTo(4);
        assertThat(hook.err()).contains("backup-hook: backup command failed (exit 7)");
        assertThat(hook.calls()).containsExactly(
            "admin exporting pause --retries 3", "admin exporting resume --retries 3");
    }

    @Test
    void doesNotRunTheBackupWhenThePauseFailsButStillResumes() throws Exception
    {
        final BackupHook hook = new BackupHook(temp).withRecordingCli(1, 0);
        final Path marker = temp.resolve("backup-ran");

        final int exit = hook.run(RUN_TIMEOUT, "--", "touch", marker.toString());

        assertThat(exit).isEqualTo(3);
        assertThat(marker).doesNotExist();
        assertThat(hook.err()).contains("backup-hook: pause failed (exit 1): some pairs failed");
        assertThat(hook.calls()).containsExactly(
            "admin exporting pause --retries 3", "admin exporting resume --retries 3");
    }

    @Test
    void aFailedResumeWinsAndSaysWhatToRun() throws Exception
    {
        final BackupHook hook = new BackupHook(temp).withRecordingCli(0, 4);

        final int exit = hook.run(RUN_TIMEOUT, "--", "sh", "-c", "exit 7");

        assertThat(exit).isEqualTo(5);
        assertThat(hook.err())
            .contains("backup command failed (exit 7)")
            .contains("backup-hook: resume failed (exit 4): gateway unreachable")
            .contains("sluice admin exporting resume --retries 3");
    }

    @Test
    void resumesWhenTerminatedDuringTheBackupAndStopsTheBackup() throws Exception
    {
        interruptDuringBackup("TERM", 143);
    }

    @Test
    void resumesWhenInterruptedDuringTheBackup() throws Exception
    {
        interruptDuringBackup("INT", 130);
    }

    @Test
    void aBackupIgnoringSigtermIsKilledWithEverythingItStartedAndExportingResumes() throws Exception
    {
        final BackupHook hook = new BackupHook(temp).withRecordingCli(0, 0);
        final Path pidFile = temp.resolve("sleep.pid");

        final Process process = hook.start("--stop-timeout", "1", "--",
            "sh", "-c", "trap '' TERM; sleep 60 & echo $! > " + pidFile + "; wait; sleep 60");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(pidFile) && Files.size(pidFile) > 0);
        final long sleepPid = Long.parseLong(Files.readString(pidFile).strip());

        new ProcessBuilder("kill", "-TERM", Long.toString(process.pid())).inheritIO().start().waitFor();

        assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("hook ended").isTrue();
        assertThat(process.exitValue()).as(hook.err()).isEqualTo(143);
        assertThat(hook.err()).contains("the backup step ignored SIGTERM for 1s; killing it");
        assertThat(hook.calls()).containsExactly(
            "admin exporting pause --retries 3", "admin exporting resume --retries 3");
        final Optional<ProcessHandle> sleep = ProcessHandle.of(sleepPid);
        await().atMost(Duration.ofSeconds(10)).until(() -> sleep.map(handle -> !handle.isAlive()).orElse(true));
    }

    @Test
    void usageErrorsExitTwoAndTouchNothing() throws Exception
    {
        final BackupHook hook = new BackupHook(temp).withRecordingCli(0, 0);

        assertThat(hook.run(RUN_TIMEOUT, "--retries", "x", "--", "true")).isEqualTo(2);
        assertThat(hook.err()).contains("--retries needs a number");
        assertThat(hook.run(RUN_TIMEOUT, "--bogus", "--", "true")).isEqualTo(2);
        assertThat(hook.run(RUN_TIMEOUT, "--stop-timeout", "soon", "--", "true")).isEqualTo(2);
        assertThat(hook.run(RUN_TIMEOUT, "--soft")).isEqualTo(2);
        assertThat(hook.err()).contains("no backup command given after --");
        assertThat(hook.calls()).isEmpty();
    }

    @Test
    void withTheRealCliAgainstAGatewayItRetriesFailedPairsAndResumes() throws Exception
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            final FakeExportingCluster cluster = new FakeExportingCluster(3, 2, 3)
                .script(new PartitionReplica(1, 2), "FAILED");
            cluster.installOn(gateway);
            final BackupHook hook = new BackupHook(temp).withRealCli().env("SLUICE_TOKEN", "t0ken");
            final Path stateDuringBackup = temp.resolve("state-during-backup");

            final int exit = hook.run(RUN_TIMEOUT, "--retries", "2", "--gateway", gateway.url(),
                "--", "sh", "-c", "echo backing up > " + stateDuringBackup);

            assertThat(exit).as(hook.err()).isZero();
            assertThat(stateDuringBackup).exists();
            final List<FakeGateway.Request> requests = gateway.requests();
            assertThat(requests).extracting(FakeGateway.Request::path).containsExactly(
                "/actuator/exporting/pause", "/actuator/exporting/pause", "/actuator/exporting/resume");
            assertThat(requests.get(1).body()).isEqualTo("{\"targets\":[{\"brokerId\":1,\"partitionId\":2}]}");
            assertThat(requests).allSatisfy(request -> assertThat(request.header("Authorization")).isEqualTo("Bearer t0ken"));
            cluster.pairs().forEach(pair -> assertThat(cluster.state(pair)).isEqualTo("EXPORTING"));
        }
    }

    @Test
    void withTheRealCliAnUnreachableGatewaySaysNothingWasPausedAndExits3() throws Exception
    {
        final BackupHook hook = new BackupHook(temp).withRealCli();
        final Path marker = temp.resolve("backup-ran");

        for (final String retries : new String[]{"0", "1"})
        {
            final int exit = hook.run(RUN_TIMEOUT, "--retries", retries, "--gateway", "http://127.0.0.1:1",
                "--", "touch", marker.toString());

            assertThat(exit).as(hook.err()).isEqualTo(3);
            assertThat(marker).doesNotExist();
            assertThat(hook.err()).contains("pause failed (exit 4): gateway unreachable")
                .contains("nothing was paused").doesNotContain("resume failed").doesNotContain("may still be paused");
        }
    }

    @Test
    void withTheRealCliAMissingTokenSaysNothingWasPausedAndExits3() throws Exception
    {
        try (FakeGateway gateway = FakeGateway.start())
        {
            gateway.on("POST", "/actuator/exporting/pause",
                FakeGateway.Reply.error(401, "unauthorized", "a bearer token is required"));
            final BackupHook hook = new BackupHook(temp).withRealCli();
            final Path marker = temp.resolve("backup-ran");

            final int exit = hook.run(RUN_TIMEOUT, "--retries", "2", "--gateway", gateway.url(),
                "--", "touch", marker.toString());

            assertThat(exit).as(hook.err()).isEqualTo(3);
            assertThat(marker).doesNotExist();
            assertThat(hook.err()).contains("pause failed (exit 3): refused").contains("nothing was paused");
            assertThat(gateway.requests()).extracting(FakeGateway.Request::path)
                .containsExactly("/actuator/exporting/pause");
        }
    }

    @Test
    void aPauseThatReachedTheGatewayAndFailedIsStillUndoneByAResume() throws Exception
    {
        final BackupHook hook = new BackupHook(temp).withRecordingCli(4, 0);

        final int exit = hook.run(RUN_TIMEOUT, "--", "true");

        // The recording CLI prints no unreachable rounds: with 3 retries, some round may have reached the gateway.
        assertThat(exit).as(hook.err()).isEqualTo(3);
        assertThat(hook.err()).doesNotContain("nothing was paused");
        assertThat(hook.calls()).containsExactly(
            "admin exporting pause --retries 3", "admin exporting resume --retries 3");
    }

    private void interruptDuringBackup(final String signal, final int expectedExit) throws Exception
    {
        final BackupHook hook = new BackupHook(temp).withRecordingCli(0, 0);
        final Path pidFile = temp.resolve("backup.pid");

        final Process process = hook.start("--", "sh", "-c", "echo $$ > " + pidFile + "; exec sleep 60");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(pidFile) && Files.size(pidFile) > 0);
        final long backupPid = Long.parseLong(Files.readString(pidFile).strip());

        new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start().waitFor();

        assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("hook ended").isTrue();
        assertThat(process.exitValue()).as(hook.err()).isEqualTo(expectedExit);
        assertThat(hook.err()).contains("interrupted by SIG" + signal + " during the backup step");
        assertThat(hook.calls()).containsExactly(
            "admin exporting pause --retries 3", "admin exporting resume --retries 3");
        final Optional<ProcessHandle> backup = ProcessHandle.of(backupPid);
        await().atMost(Duration.ofSeconds(10)).until(() -> backup.map(handle -> !handle.isAlive()).orElse(true));
    }
}
