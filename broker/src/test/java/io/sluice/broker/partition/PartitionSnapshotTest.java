package io.sluice.broker.partition;

import io.sluice.broker.backfill.BackfillMessages;
import io.sluice.broker.backfill.BackfillTask;
import io.sluice.broker.backfill.BackfillTaskState;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.broker.log.codecs.PartitionSnapshotEncoder;
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
    @Test
    void aVersion4SnapshotIsStillReadWithoutUnavailableRanges() throws IOException
    {
        // The version 4 layout byte by byte: header, block, exporters group (block 8: position only), two sections.
        final byte[] id = "file".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        final UnsafeBuffer v4 = new UnsafeBuffer(new byte[8 + 16 + 4 + 8 + 4 + id.length + 4 + 4]);
        int at = 0;
        v4.putShort(at, (short)16, ByteOrder.LITTLE_ENDIAN);
        v4.putShort(at + 2, (short)PartitionSnapshotEncoder.TEMPLATE_ID, ByteOrder.LITTLE_ENDIAN);
        v4.putShort(at + 4, (short)PartitionSnapshotEncoder.SCHEMA_ID, ByteOrder.LITTLE_ENDIAN);
        v4.putShort(at + 6, (short)4, ByteOrder.LITTLE_ENDIAN);
        at += 8;
        v4.putLong(at, 40, ByteOrder.LITTLE_ENDIAN);
        v4.putLong(at + 8, 12, ByteOrder.LITTLE_ENDIAN);
        at += 16;
        v4.putShort(at, (short)8, ByteOrder.LITTLE_ENDIAN);
        v4.putShort(at + 2, (short)1, ByteOrder.LITTLE_ENDIAN);
        at += 4;
        v4.putLong(at, 7, ByteOrder.LITTLE_ENDIAN);
        at += 8;
        v4.putInt(at, id.length, ByteOrder.LITTLE_ENDIAN);
        v4.putBytes(at + 4, id);
        at += 4 + id.length;
        v4.putInt(at, 0, ByteOrder.LITTLE_ENDIAN);
        v4.putInt(at + 4, 0, ByteOrder.LITTLE_ENDIAN);

        final PartitionSnapshot read = PartitionSnapshot.decode(v4, 0, v4.capacity(), "v4");

        assertThat(read).isEqualTo(new PartitionSnapshot(40, 12, Map.of("file", 7L), new byte[0], new byte[0]));
        assertThat(read.unavailable()).isEmpty();
    }

    /** Offset of the version in the SBE message header (blockLength, templateId, schemaId, version). */
    private static final int HEADER_VERSION_OFFSET = 6;

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
    void aSnapshotOfAnEarlierSchemaVersionIsRefusedNamingItsVersion()
    {
        // Version 3 snapshots held the exporting state, which is the control group's now: their layout differs.
        final byte[] bytes = snapshot(Map.of("file", 7L)).encode();
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        buffer.putShort(HEADER_VERSION_OFFSET, (short)3, ByteOrder.LITTLE_ENDIAN);

        assertThatThrownBy(() -> PartitionSnapshot.decode(buffer, 0, bytes.length, "the-file"))
            .isInstanceOf(IOException.class).hasMessageContaining("the-file")
            .hasMessageContaining("schema version 3, written by an earlier Sluice version");
    }

    @Test
    void aSnapshotWithBackfillTasksReadsThemBackAsTheirMessage() throws IOException
    {
        final List<BackfillTask> tasks = List.of(
            new BackfillTask("bf-1", "file", 1, 501, 850, 600, 2, BackfillTaskState.RUNNING, "boom", 1_000, 2_000),
            new BackfillTask("bf-1", "file", 2, 851, 1_200, 850, 0, BackfillTaskState.PENDING, "", 1_000, 1_000));
        final PartitionSnapshot snapshot = new PartitionSnapshot(40, 12, Map.of("file", 7L),
            BackfillMessages.encodeTasks(tasks), new byte[0]);

        final byte[] bytes = snapshot.encode();
        final PartitionSnapshot read = PartitionSnapshot.decode(new UnsafeBuffer(bytes), 0, bytes.length, "file");

        assertThat(read).isEqualTo(snapshot);
        assertThat(new UnsafeBuffer(bytes).getShort(HEADER_VERSION_OFFSET, ByteOrder.LITTLE_ENDIAN))
            .isEqualTo((short)MessageHeaderEncoder.SCHEMA_VERSION);
        final byte[] backfills = read.backfills();
        assertThat(BackfillMessages.decodeTasks(new UnsafeBuffer(backfills), 0, backfills.length)).isEqualTo(tasks);
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

    @Test
    void aSnapshotWhoseSectionClaimsMoreBytesThanTheFileHoldsOrThatIsCutShortIsRefusedNamingTheFile()
    {
        final byte[] bytes = snapshot(Map.of()).encode();
        // Without exporters the append ids' length follows the block and the empty exporters group's header.
        final int idsLength = MessageHeaderEncoder.ENCODED_LENGTH + PartitionSnapshotEncoder.BLOCK_LENGTH +
            PartitionSnapshotEncoder.ExportersEncoder.sbeHeaderSize();
        final UnsafeBuffer lying = new UnsafeBuffer(bytes.clone());
        assertThat(lying.getInt(idsLength, ByteOrder.LITTLE_ENDIAN)).isEqualTo(4);
        lying.putInt(idsLength, -2, ByteOrder.LITTLE_ENDIAN); // 4 GiB - 2 as the uint32 it is

        assertThatThrownBy(() -> PartitionSnapshot.decode(lying, 0, bytes.length, "the-file"))
            .isInstanceOf(IOException.class).hasMessageContaining("the-file")
            .hasMessageContaining("append ids claim 4294967294 bytes");
        assertThatThrownBy(() -> PartitionSnapshot.decode(new UnsafeBuffer(bytes), 0, bytes.length - 2, "the-file"))
            .isInstanceOf(IOException.class).hasMessageContaining("the-file");
        assertThatThrownBy(() -> PartitionSnapshot.decode(new UnsafeBuffer(bytes), 0, idsLength - 3, "the-file"))
            .isInstanceOf(IOException.class).hasMessageContaining("cut short");
    }

    private static PartitionSnapshot snapshot(final Map<String, Long> positions)
    {
        return new PartitionSnapshot(40, 12, positions, new byte[] {1, 2, 3}, new byte[] {4, 5, 6, 7});
    }
}
