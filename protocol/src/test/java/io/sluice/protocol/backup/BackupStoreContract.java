package io.sluice.protocol.backup;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What every {@link BackupStore} does alike; each store's test runs it against a real store. */
abstract class BackupStoreContract
{
    @TempDir
    Path temp;

    abstract BackupStore store();

    @Test
    void aStoredFileReadsBackWithTheSizeAndSha256ItWasStoredWith() throws Exception
    {
        final Path file = temp.resolve("segment.log");
        Files.write(file, "0123456789".repeat(10_000).getBytes(StandardCharsets.US_ASCII));
        final BackupStore.StoredObject stored = store().put("backups/1/partition-1/records/segment.log", file);
        assertThat(stored.size()).isEqualTo(100_000);
        assertThat(stored.sha256()).hasSize(64);
        assertThat(store().size("backups/1/partition-1/records/segment.log")).isEqualTo(100_000);
        final BackupDigests.Digested read;
        try (InputStream in = store().open("backups/1/partition-1/records/segment.log"))
        {
            read = BackupDigests.digest(in);
        }
        assertThat(read.sha256()).isEqualTo(stored.sha256());
    }

    @Test
    void smallObjectsAreListedByPrefixAndAMissingOneReadsAsNone() throws Exception
    {
        store().putBytes("backups/5/cut", "a".getBytes(StandardCharsets.UTF_8));
        store().putBytes("backups/5/partition-1.upload", "b".getBytes(StandardCharsets.UTF_8));
        store().putBytes("backups/12/cut", "c".getBytes(StandardCharsets.UTF_8));
        assertThat(store().list("backups/5/")).containsExactly("backups/5/cut", "backups/5/partition-1.upload");
        assertThat(BackupKeys.backupIds(store())).containsExactly(5L, 12L);
        assertThat(store().getBytes("backups/5/manifest")).isNull();
        assertThat(store().size("backups/5/manifest")).isEqualTo(-1);
        assertThat(new String(store().getBytes("backups/12/cut"), StandardCharsets.UTF_8)).isEqualTo("c");
    }

    @Test
    void deletingABackupsPrefixLeavesTheOthers() throws Exception
    {
        store().putBytes("backups/5/cut", new byte[] {1});
        store().putBytes("backups/5/partition-2/state", new byte[] {2});
        store().putBytes("backups/50/cut", new byte[] {3});
        store().deletePrefix(BackupKeys.prefix(5));
        assertThat(store().list("backups/")).isEqualTo(List.of("backups/50/cut"));
    }

    @Test
    void aKeyThatCouldLeaveTheStoreIsRefused()
    {
        assertThatThrownBy(() -> store().putBytes("backups/../../etc/x", new byte[0]))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a backup object key");
    }
}
