package io.sluice.broker.backup;

import io.sluice.protocol.backup.BackupKeys;
import io.sluice.protocol.backup.BackupManifest;
import io.sluice.protocol.backup.BackupManifest.PartitionCut;
import io.sluice.protocol.backup.FilesystemBackupStore;
import io.sluice.protocol.backup.PartitionUpload;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A broker restarted in the middle of an upload: the links its previous run staged are gone with that run's upload,
 * so it reports the partition failed in the store at once (and only the partitions the cut gave it, not yet settled).
 */
class PartitionBackupsTest
{
    @TempDir
    Path temp;

    @Test
    void aBrokerRestartedMidUploadReportsThatUploadFailedAndDeletesItsLinks() throws Exception
    {
        final FilesystemBackupStore store = new FilesystemBackupStore(temp.resolve("store"));
        final BackupManifest cut = new BackupManifest(9, 1_000, 0, 0, new BackupManifest.Layout(3, 3, 3), List.of(
            new PartitionCut(1, 2, 40, Map.of("file", 30L), List.of()),
            new PartitionCut(2, 0, 50, Map.of(), List.of()),
            new PartitionCut(3, 2, 60, Map.of(), List.of())));
        store.putBytes(BackupKeys.cut(9), cut.toBytes());
        final PartitionUpload done = new PartitionUpload(3, 2, 60, List.of(), null);
        store.putBytes(BackupKeys.upload(9, 3), done.toBytes());
        final Path brokerDir = temp.resolve("broker-2");
        for (final int p : new int[] {1, 2, 3})
        {
            final Path staged = brokerDir.resolve(PartitionBackups.STAGING).resolve("9").resolve("partition-" + p);
            Files.createDirectories(staged);
            Files.writeString(staged.resolve("state"), "linked");
        }

        try (PartitionBackups backups = new PartitionBackups(2, brokerDir, store, 60_000))
        {
            await("partition 1's upload reported").atMost(Duration.ofSeconds(10))
                .until(() -> store.getBytes(BackupKeys.upload(9, 1)) != null);
            final PartitionUpload report = PartitionUpload.parse(store.getBytes(BackupKeys.upload(9, 1)), "report");
            assertThat(report.failed()).isTrue();
            assertThat(report.failure()).isEqualTo("partition 1 on broker 2: the broker stopped during the upload " +
                "and was restarted; the upload is not resumed");
            assertThat(report.checkpointPosition()).isEqualTo(40);
        }
        assertThat(store.getBytes(BackupKeys.upload(9, 2))).as("partition 2 is broker 0's to report").isNull();
        assertThat(PartitionUpload.parse(store.getBytes(BackupKeys.upload(9, 3)), "report").failed())
            .as("partition 3 had reported before the restart").isFalse();
        assertThat(brokerDir.resolve(PartitionBackups.STAGING)).doesNotExist();
    }
}
