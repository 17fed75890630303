package io.sluice.qa.operator;

import io.sluice.qa.Exporting;
import io.sluice.qa.Records;
import io.sluice.qa.SharedCluster;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 7: {@code dist/bin/backup-hook.sh} with the real CLI ({@code SLUICE_JAR}) against a cluster of separate
 * JVMs (3 brokers, 6 partitions, RF 3). The backup command is a small script that tells the test when it runs and
 * waits to be told to end, so records are written while the backup runs; whatever the backup does, exporting
 * ends up resumed on every pair and those records are exported.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Execution(ExecutionMode.SAME_THREAD)
class BackupHookAgainstClusterIT
{
    private static final Duration QUIET_PERIOD = Duration.ofSeconds(2);

    @RegisterExtension
    static final QaRun RUN = new QaRun();
    @RegisterExtension
    static final SharedCluster SHARED = new SharedCluster();

    private final List<Process> hooks = new ArrayList<>();
    private final List<Long> backupPids = new ArrayList<>();
    private SluiceCluster cluster;

    @BeforeAll
    void startCluster()
    {
        cluster = SHARED.cluster();
    }

    @BeforeEach
    void everyBrokerUpAndExporting()
    {
        Exporting.everyBrokerUpAndExporting(cluster);
    }

    /** A failed test may leave a hook or its backup (in its own process group) running: end them. */
    @AfterEach
    void endLeftoverProcesses()
    {
        for (final Process hook : hooks)
        {
            hook.descendants().forEach(ProcessHandle::destroyForcibly);
            hook.destroyForcibly();
        }
        hooks.clear();
        backupPids.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        backupPids.clear();
    }

    @Test
    void failedBackupStillResumesAndRecordsWrittenDuringItAreExported() throws Exception
    {
        final Path folder = Files.createDirectories(RUN.directory().resolve("failed-backup"));
        Records.awaitExported(cluster, Records.write(cluster, "before-failed-backup", 60));

        // The backup: say it started, wait for the test's word (bounded), then fail like `false`.
        final Process hook = startHook(folder, "bash", "-c",
            "touch \"$0/started\"; for i in $(seq 1 1200); do [ -f \"$0/finish\" ] && break; sleep 0.1; done; exec false",
            folder.toString());
        Hooks.awaitFile(hook, folder.resolve("started"), folder.resolve("hook.err"));
        Exporting.awaitClusterState(cluster, "PAUSED");
        final Map<Integer, byte[]> snapshot = Records.snapshot(cluster);
        final List<WrittenRecord> duringBackup = Records.write(cluster, "during-failed-backup", 200);
        Await.quietPeriod("the failing backup runs; nothing may be exported meanwhile", QUIET_PERIOD);
        Records.assertUnchanged(cluster, snapshot, "while the backup ran");
        Files.createFile(folder.resolve("finish"));

        assertThat(Hooks.awaitExit(hook, folder.resolve("hook.err")))
            .as("hook exit; stderr: %s", Hooks.read(folder.resolve("hook.err"))).isEqualTo(4);
        assertThat(Hooks.read(folder.resolve("hook.err"))).contains("backup-hook: backup command failed (exit 1)");
        Exporting.assertEveryPair(cluster, "EXPORTING");
        Records.awaitExported(cluster, duringBackup);
    }

    @Test
    void interruptedHookStopsTheBackupAndResumes() throws Exception
    {
        final Path folder = Files.createDirectories(RUN.directory().resolve("interrupted-backup"));
        Records.awaitExported(cluster, Records.write(cluster, "before-interrupted-backup", 60));

        // The backup: write its pid, then sleep far longer than the test; only the hook's SIGTERM ends it.
        final Process hook = startHook(folder, "bash", "-c",
            "echo $$ > \"$0/backup.pid.tmp\" && mv \"$0/backup.pid.tmp\" \"$0/backup.pid\"; exec sleep 600",
            folder.toString());
        Hooks.awaitFile(hook, folder.resolve("backup.pid"), folder.resolve("hook.err"));
        final long backupPid = Long.parseLong(Hooks.read(folder.resolve("backup.pid")).trim());
        backupPids.add(backupPid);
        Exporting.awaitClusterState(cluster, "PAUSED");
        final Map<Integer, byte[]> snapshot = Records.snapshot(cluster);
        final List<WrittenRecord> duringBackup = Records.write(cluster, "during-interrupted-backup", 200);
        Await.quietPeriod("the backup runs; nothing may be exported meanwhile", QUIET_PERIOD);
        Records.assertUnchanged(cluster, snapshot, "while the backup ran");

        hook.destroy(); // SIGTERM to the hook's bash
        assertThat(Hooks.awaitExit(hook, folder.resolve("hook.err")))
            .as("hook exit; stderr: %s", Hooks.read(folder.resolve("hook.err"))).isEqualTo(143);
        assertThat(Hooks.read(folder.resolve("hook.err")))
            .contains("backup-hook: interrupted by SIGTERM during the backup step");
        Await.until("backup process " + backupPid + " stopped by the hook", Exporting.STATE_TIMEOUT,
            () -> ProcessHandle.of(backupPid).map(process -> !process.isAlive()).orElse(true));
        Exporting.assertEveryPair(cluster, "EXPORTING");
        Records.awaitExported(cluster, duringBackup);
    }

    private Process startHook(final Path folder, final String... backupCommand) throws IOException
    {
        final Path jar = SluiceCluster.jar();
        final Path hookScript = jar.getParent().getParent().resolve("bin").resolve("backup-hook.sh");
        final List<String> command = new ArrayList<>(List.of("bash", hookScript.toString(),
            "--gateway", cluster.client().managementBase().toString(), "--retries", "3", "--stop-timeout", "10", "--"));
        command.addAll(List.of(backupCommand));
        final ProcessBuilder builder = new ProcessBuilder(command)
            .directory(folder.toFile())
            .redirectOutput(folder.resolve("hook.out").toFile())
            .redirectError(folder.resolve("hook.err").toFile());
        builder.environment().remove("SLUICE_GATEWAY");
        // the gateway's token as the hook documents it (never on the command line); none the test JVM inherited
        builder.environment().put("SLUICE_TOKEN", cluster.token());
        builder.environment().put("SLUICE_JAR", jar.toString());
        builder.environment().put("JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());
        final Process hook = builder.start();
        hooks.add(hook);
        return hook;
    }
}
