package io.sluice.protocol.backup;

import io.sluice.protocol.backup.BackupManifest.PartitionCut;
import io.sluice.protocol.backup.BackupManifest.PartitionObject;
import io.sluice.protocol.backup.BackupManifest.SinkCut;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A backup's cut and manifest in their text form. */
class BackupManifestTest
{
    @Test
    void aCutWithSinkSnapshotsReadsBackEqualAndKeepsThemWhenCompleted()
    {
        final BackupManifest cut = new BackupManifest(9, 1000, 0, 140, new BackupManifest.Layout(3, 2, 3),
            List.of(new PartitionCut(1, 0, 40, Map.of("search", 30L, "file", 40L), List.of()),
                new PartitionCut(2, 1, 12, Map.of(), List.of())),
            List.of(new SinkCut("search", "sluice-backup-9", SinkCut.SUCCESS, null)));

        final BackupManifest read = BackupManifest.parse(cut.toBytes(), "cut");
        assertThat(read).isEqualTo(cut);
        assertThat(read.sinks().get(0).succeeded()).isTrue();
        assertThat(read.holdMillis()).isEqualTo(140);

        final BackupManifest completed = read.completed(Map.of(1, List.of(new PartitionObject("state", 5, "ab"))), 2000);
        assertThat(BackupManifest.parse(completed.toBytes(), "manifest").sinks()).isEqualTo(cut.sinks());
    }

    @Test
    void aSinkSnapshotNamedWithASpaceIsRefused()
    {
        assertThatThrownBy(() -> new SinkCut("search", "a b", SinkCut.SUCCESS, null))
            .isInstanceOf(IllegalArgumentException.class);
    }
}
