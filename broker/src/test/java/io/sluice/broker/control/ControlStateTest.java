package io.sluice.broker.control;

import io.sluice.broker.log.codecs.ExportingChangeEntryEncoder;
import io.sluice.protocol.codecs.ExportingState;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.ratis.protocol.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The control group's replicated state applied entry by entry, without Raft. */
class ControlStateTest
{
    private static final int PARTITIONS = 4;

    @TempDir
    Path dir;

    private final List<Integer> told = new ArrayList<>();
    private final ControlState state = new ControlState(0, PARTITIONS, told::add);
    private long index;

    @Test
    void anOperationForEveryPartitionSetsEachAndTellsOfEach() throws IOException
    {
        apply(ExportingChange.ofAll(5, ExportingState.PAUSED));

        for (int p = 1; p <= PARTITIONS; p++)
        {
            assertThat(state.stamp(p)).isEqualTo(new ExportingStamp(ExportingState.PAUSED, 5));
        }
        assertThat(told).containsExactly(1, 2, 3, 4);
    }

    @Test
    void aListedOperationChangesOnlyItsPartitionsAndSkipsOnesOutsideTheCluster() throws IOException
    {
        apply(ExportingChange.of(3, ExportingState.SOFT_PAUSED, 2, 4, 9));

        assertThat(state.stamp(1)).isEqualTo(ExportingStamp.INITIAL);
        assertThat(state.stamp(2)).isEqualTo(new ExportingStamp(ExportingState.SOFT_PAUSED, 3));
        assertThat(state.stamp(3)).isEqualTo(ExportingStamp.INITIAL);
        assertThat(state.stamp(4)).isEqualTo(new ExportingStamp(ExportingState.SOFT_PAUSED, 3));
        assertThat(state.stamp(9)).as("not a partition of the cluster").isEqualTo(ExportingStamp.INITIAL);
        assertThat(told).containsExactly(2, 4);
    }

    @Test
    void anOlderVersionNeverUndoesANewerOneAndTheSameOperationTwiceChangesNothing() throws IOException
    {
        apply(ExportingChange.ofAll(7, ExportingState.EXPORTING));
        apply(ExportingChange.of(6, ExportingState.PAUSED, 1)); // a pause that arrives late
        told.clear();
        apply(ExportingChange.ofAll(7, ExportingState.EXPORTING)); // proposed by a second broker
        apply(ExportingChange.of(7, ExportingState.PAUSED, 2)); // another operation at the same version

        assertThat(state.stamp(1)).isEqualTo(new ExportingStamp(ExportingState.EXPORTING, 7));
        assertThat(state.stamp(2)).isEqualTo(new ExportingStamp(ExportingState.EXPORTING, 7));
        assertThat(told).isEmpty();

        apply(ExportingChange.of(8, ExportingState.PAUSED, 2));
        assertThat(state.stamp(2)).isEqualTo(new ExportingStamp(ExportingState.PAUSED, 8));
    }

    @Test
    void aVersionWaiterCompletesOnceItsPartitionHoldsThatVersionOrANewerOne() throws Exception
    {
        final CompletableFuture<ExportingStamp> onTwo = state.awaitVersion(2, 5);
        final CompletableFuture<ExportingStamp> onThree = state.awaitVersion(3, 5);

        apply(ExportingChange.of(5, ExportingState.PAUSED, 3));
        assertThat(onTwo).isNotDone();
        assertThat(onThree).isCompletedWithValue(new ExportingStamp(ExportingState.PAUSED, 5));

        apply(ExportingChange.ofAll(9, ExportingState.EXPORTING));
        assertThat(onTwo).isCompletedWithValue(new ExportingStamp(ExportingState.EXPORTING, 9));
        assertThat(state.awaitVersion(1, 9)).as("already held").isCompletedWithValue(
            new ExportingStamp(ExportingState.EXPORTING, 9));
        // A waiter its caller gave up on is dropped, not completed later.
        final CompletableFuture<ExportingStamp> bounded = state.awaitVersion(1, 10)
            .completeOnTimeout(null, 10, TimeUnit.MILLISECONDS);
        assertThat(bounded.get(5, TimeUnit.SECONDS)).isNull();
    }

    @Test
    void aBarrierChangesNothing() throws IOException
    {
        apply(ExportingChange.ofAll(2, ExportingState.PAUSED));
        told.clear();

        state.apply(++index, view(ControlEntries.barrier(1)));

        assertThat(state.stamp(1)).isEqualTo(new ExportingStamp(ExportingState.PAUSED, 2));
        assertThat(told).isEmpty();
    }

    @Test
    void anEntryOfAnotherSchemaOrTemplateOrCutShortIsRefusedAndChangesNothing()
    {
        final UnsafeBuffer otherSchema = view(ControlEntries.exportingChange(ExportingChange.ofAll(1, ExportingState.PAUSED), 0));
        otherSchema.putShort(4, (short)(ExportingChangeEntryEncoder.SCHEMA_ID + 1), ByteOrder.LITTLE_ENDIAN);
        final UnsafeBuffer otherTemplate = view(ControlEntries.exportingChange(ExportingChange.ofAll(1, ExportingState.PAUSED), 0));
        otherTemplate.putShort(2, (short)20, ByteOrder.LITTLE_ENDIAN); // a partition log's AppendEntry

        assertThatThrownBy(() -> state.apply(1, otherSchema)).isInstanceOf(IOException.class).hasMessageContaining("schema");
        assertThatThrownBy(() -> state.apply(2, otherTemplate)).isInstanceOf(IOException.class)
            .hasMessageContaining("unknown template 20");
        assertThatThrownBy(() -> state.apply(3, new UnsafeBuffer(new byte[3]))).isInstanceOf(IOException.class);
        assertThat(state.stamp(1)).isEqualTo(ExportingStamp.INITIAL);
        assertThat(told).isEmpty();
    }

    @Test
    void aStateRestoredFromItsSnapshotEqualsTheOriginalAndTellsOfEveryPartition() throws IOException
    {
        apply(ExportingChange.of(4, ExportingState.PAUSED, 1, 3));
        apply(ExportingChange.of(6, ExportingState.SOFT_PAUSED, 3));
        final Path file = dir.resolve("snapshot.1_2");
        state.snapshot().writeTo(file);

        final List<Integer> restoredTold = new ArrayList<>();
        final ControlState restored = new ControlState(1, PARTITIONS, restoredTold::add);
        restored.restore(ControlSnapshot.readFrom(file));

        assertThat(restored.snapshot()).isEqualTo(state.snapshot());
        assertThat(restored.snapshot().partitions()).containsExactly(
            Map.entry(1, new ExportingStamp(ExportingState.PAUSED, 4)),
            Map.entry(3, new ExportingStamp(ExportingState.SOFT_PAUSED, 6)));
        assertThat(restored.stamp(2)).isEqualTo(ExportingStamp.INITIAL);
        assertThat(restoredTold).containsExactly(1, 2, 3, 4);

        restored.restore(null);
        assertThat(restored.snapshot().partitions()).isEmpty();
    }

    @Test
    void aFileThatIsNotAControlSnapshotIsRefusedByName() throws IOException
    {
        // Header (8 bytes), an empty block and the group's header (4) name one partition; only 2 of its 13 bytes follow.
        final byte[] whole = new ControlSnapshot(Map.of(1, new ExportingStamp(ExportingState.PAUSED, 1))).encode();
        final Path cut = Files.write(dir.resolve("cut"), java.util.Arrays.copyOf(whole, 14));
        final Path other = Files.write(dir.resolve("other"), new byte[] {8, 0, 50, 0, 2, 0, 4, 0, 1, 2, 3, 4, 5, 6, 7, 8});

        assertThatThrownBy(() -> ControlSnapshot.readFrom(cut)).isInstanceOf(IOException.class)
            .hasMessageContaining(cut.toString()).hasMessageContaining("cut short");
        assertThatThrownBy(() -> ControlSnapshot.readFrom(other)).isInstanceOf(IOException.class)
            .hasMessageContaining(other + " is not a control snapshot");
    }

    private void apply(final ExportingChange change) throws IOException
    {
        state.apply(++index, view(ControlEntries.exportingChange(change, 0)));
    }

    private static UnsafeBuffer view(final Message entry)
    {
        return new UnsafeBuffer(entry.getContent().toByteArray());
    }
}
