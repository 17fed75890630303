package io.sluice.broker.partition;

import io.sluice.broker.backfill.BackfillMessages;
import io.sluice.broker.backfill.BackfillTask;
import io.sluice.broker.backfill.BackfillTaskState;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.ExportingState;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.util.SizeInBytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The snapshot file's content and its files in the state machine directory, without a Raft group. */
class PartitionSnapshotTest
{
    /** Offset of the version in the SBE message header (blockLength, templateId, schemaId, version). */
    private static final int HEADER_VERSION_OFFSET = 6;
    private static final String VERSION_2_SNAPSHOT =
        "190032000200020028000000000000000c00000000000000020500000000000000080001000700000000000000040000" +
        "0066696c659300000001020000000400000062662d310400000066696c6501000000f501000000000000520300000000" +
        "00005802000000000000020000000104000000626f6f6de803000000000000d0070000000000000400000062662d3104" +
        "00000066696c65020000005303000000000000b0040000000000005203000000000000000000000000000000e8030000" +
        "00000000e80300000000000000000000";
    /** Where the backfills field's bytes start in it: after the header, the block and the one exporter. */
    private static final int VERSION_2_BACKFILLS_OFFSET = 8 + 25 + 4 + 8 + 4 + 4 + 4;

    @TempDir
    Path dir;

    @Test
    void aSnapshotWrittenToAFileReadsBackEqualAndLeavesNoPartialFile() throws IOException
    {
        final PartitionSnapshot snapshot = snapshot(Map.of("file", 7L, "kafka", 9L));
        final Path file = dir.resolve("snapshot.1_10");

        snapshot.writeTo(file);

        assertThat(PartitionSnapshot.readFrom(file)).isEqualTo(snapshot);
        try (Stream<Path> files = Files.list(dir))
        {
            assertThat(files).containsExactly(file);
        }
    }

    @Test
    void equalStatesEncodeToEqualBytesWhateverOrderTheirExportersCameIn()
    {
        final Map<String, Long> oneOrder = new LinkedHashMap<>();
        oneOrder.put("a", 1L);
        oneOrder.put("b", 2L);
        oneOrder.put("c", 3L);
        final Map<String, Long> otherOrder = new LinkedHashMap<>();
        otherOrder.put("c", 3L);
        otherOrder.put("a", 1L);
        otherOrder.put("b", 2L);

        assertThat(snapshot(oneOrder).encode()).isEqualTo(snapshot(otherOrder).encode());
        assertThat(snapshot(oneOrder).encode()).isNotEqualTo(snapshot(Map.of("a", 1L, "b", 2L, "c", 4L)).encode());
    }

    @Test
    void aSnapshotFromBeforeTheIdempotencyAndBackfillFieldsReadsThemAsEmpty() throws IOException
    {
        final byte[] bytes = snapshot(Map.of("file", 7L)).encode();
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);

        buffer.putShort(HEADER_VERSION_OFFSET, (short)2, ByteOrder.LITTLE_ENDIAN);
        final PartitionSnapshot version2 = PartitionSnapshot.decode(buffer, 0, bytes.length, "v2");
        assertThat(version2.backfills()).as("no backfill tasks message before version 3").isEmpty();
        assertThat(version2.idempotency()).containsExactly(4, 5, 6, 7);

        buffer.putShort(HEADER_VERSION_OFFSET, (short)1, ByteOrder.LITTLE_ENDIAN);
        final PartitionSnapshot version1 = PartitionSnapshot.decode(buffer, 0, bytes.length, "v1");
        assertThat(version1.backfills()).isEmpty();
        assertThat(version1.idempotency()).isEmpty();
        assertThat(version1.exporterPositions()).containsExactly(Map.entry("file", 7L));

        buffer.putShort(HEADER_VERSION_OFFSET, (short)0, ByteOrder.LITTLE_ENDIAN);
        final PartitionSnapshot version0 = PartitionSnapshot.decode(buffer, 0, bytes.length, "v0");
        assertThat(version0.backfills()).isEmpty();
        assertThat(version0.idempotency()).isEmpty();
        assertThat(version0.lastPosition()).isEqualTo(40);
    }

    @Test
    void aSnapshotWrittenBeforeVersion3HoldsItsBackfillTasksAsABackfillTasksMessage() throws IOException
    {
        // Written by the version 2 encoder: positions 40/12, SOFT_PAUSED version 5, file at 7, two backfill tasks
        // in their own layout, no remembered ids.
        final byte[] old = org.agrona.BitUtil.fromHex(VERSION_2_SNAPSHOT);
        final List<BackfillTask> tasks = List.of(
            new BackfillTask("bf-1", "file", 1, 501, 850, 600, 2, BackfillTaskState.RUNNING, "boom", 1_000, 2_000),
            new BackfillTask("bf-1", "file", 2, 851, 1_200, 850, 0, BackfillTaskState.PENDING, "", 1_000, 1_000));

        final PartitionSnapshot read = PartitionSnapshot.decode(new UnsafeBuffer(old), 0, old.length, "v2");

        assertThat(read).isEqualTo(new PartitionSnapshot(40, 12, ExportingState.SOFT_PAUSED, 5, Map.of("file", 7L),
            BackfillMessages.encodeTasks(tasks), new byte[0]));
        final byte[] again = read.encode();
        assertThat(new UnsafeBuffer(again).getShort(HEADER_VERSION_OFFSET, ByteOrder.LITTLE_ENDIAN))
            .as("written again in the current version").isEqualTo((short)MessageHeaderEncoder.SCHEMA_VERSION);
        assertThat(PartitionSnapshot.decode(new UnsafeBuffer(again), 0, again.length, "v3")).isEqualTo(read);
        final byte[] backfills = read.backfills();
        assertThat(BackfillMessages.decodeTasks(new UnsafeBuffer(backfills), 0, backfills.length)).isEqualTo(tasks);

        final byte[] corrupt = old.clone();
        corrupt[VERSION_2_BACKFILLS_OFFSET] = 9; // the backfills' own version
        assertThatThrownBy(() -> PartitionSnapshot.decode(new UnsafeBuffer(corrupt), 0, corrupt.length, "the-file"))
            .isInstanceOf(IOException.class).hasMessageContaining("the-file").hasMessageContaining("version 9");
    }

    @Test
    void aFileThatIsNotAPartitionSnapshotIsRefusedByName() throws IOException
    {
        final Path empty = Files.write(dir.resolve("empty"), new byte[0]);
        final Path other = Files.write(dir.resolve("other"), new byte[] {8, 0, 20, 0, 1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8});

        assertThatThrownBy(() -> PartitionSnapshot.readFrom(empty))
            .isInstanceOf(IOException.class).hasMessageContaining(empty.toString());
        assertThatThrownBy(() -> PartitionSnapshot.readFrom(other))
            .isInstanceOf(IOException.class).hasMessageContaining(other + " is not a partition snapshot");
    }

    @Test
    void theStoreKeepsOnlyTheLatestSnapshotListsItsSegmentsAndFindsItAfterARestart() throws IOException
    {
        final Path segment = Files.write(dir.resolve("segment-1.log"), new byte[] {1});
        try (RaftStorage storage = raftStorage())
        {
            final PartitionSnapshotStore store = new PartitionSnapshotStore();
            store.init(storage);
            assertThat(store.loadLatest()).isNull();

            store.save(TermIndex.valueOf(1, 10), snapshot(Map.of("file", 1L)), List.of());
            final PartitionSnapshot newer = snapshot(Map.of("file", 2L));
            final SnapshotInfo info = store.save(TermIndex.valueOf(2, 20), newer, List.of(segment));

            assertThat(store.latest()).isSameAs(info);
            assertThat(info.getTermIndex()).isEqualTo(TermIndex.valueOf(2, 20));
            assertThat(info.getFiles()).extracting((f) -> f.getPath().getFileName().toString())
                .containsExactly("snapshot.2_20", "segment-1.log");
            try (Stream<Path> files = Files.list(store.directory()))
            {
                assertThat(files.map((p) -> p.getFileName().toString()).filter((n) -> n.startsWith("snapshot.")))
                    .containsExactlyInAnyOrder("snapshot.2_20", "snapshot.2_20.md5");
            }

            final PartitionSnapshotStore restarted = new PartitionSnapshotStore();
            restarted.init(storage);
            final PartitionSnapshotStore.Loaded loaded = restarted.loadLatest();
            assertThat(loaded.termIndex()).isEqualTo(TermIndex.valueOf(2, 20));
            assertThat(loaded.snapshot()).isEqualTo(newer);
        }
    }

    private RaftStorage raftStorage() throws IOException
    {
        final RaftStorage storage = RaftStorage.newBuilder()
            .setDirectory(dir.resolve("raft").toFile())
            .setOption(RaftStorage.StartupOption.FORMAT)
            .setLogCorruptionPolicy(RaftServerConfigKeys.Log.CorruptionPolicy.EXCEPTION)
            .setStorageFreeSpaceMin(SizeInBytes.ONE_MB)
            .build();
        storage.initialize();
        return storage;
    }

    private static PartitionSnapshot snapshot(final Map<String, Long> positions)
    {
        return new PartitionSnapshot(40, 12, ExportingState.SOFT_PAUSED, 5, positions, new byte[] {1, 2, 3},
            new byte[] {4, 5, 6, 7});
    }
}
