package io.sluice.broker.partition;

import io.sluice.broker.exporting.UnavailableRange;
import io.sluice.broker.append.AppendIdempotency;
import io.sluice.broker.append.AppendOutcomes;
import io.sluice.broker.append.AppendReplies;
import io.sluice.broker.append.PartitionEntries;
import io.sluice.broker.backfill.BackfillEntry;
import io.sluice.broker.backfill.ManualExportingSwitch;
import io.sluice.broker.backfill.BackfillRunnerConfig;
import io.sluice.broker.backfill.BackfillTask;
import io.sluice.broker.backfill.PartitionBackfills;
import io.sluice.broker.log.codecs.ExporterPositionsEntryEncoder;
import io.sluice.broker.log.codecs.IdempotencyScope;
import io.sluice.broker.append.PartitionEntries.Batch;
import io.sluice.broker.Allocations;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import static io.sluice.broker.append.PartitionEntries.append;
import static io.sluice.broker.append.PartitionEntries.exporterPositions;
import static io.sluice.broker.append.PartitionEntries.idempotentAppend;
import static io.sluice.broker.append.PartitionEntries.records;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The partition's replicated state applied entry by entry, without Raft: a temporary directory holds its log. */
class PartitionStateTest
{
    private static final int PARTITION = 3;
    private static final long SEGMENT_BYTES = 1024 * 1024;
    private static final long WINDOW_MS = 60_000;

    @TempDir
    Path dir;

    private final List<String> events = new ArrayList<>();
    private final PartitionState.Listener listener = new PartitionState.Listener()
    {
        @Override
        public void onRecordsApplied(final int partitionId, final long lastPosition)
        {
            events.add("records " + partitionId + " " + lastPosition);
        }
    };
    private final List<PartitionState> opened = new ArrayList<>();
    private PartitionState state;

    @BeforeEach
    void open() throws IOException
    {
        state = new PartitionState(0, PARTITION, Set.of("file", "kafka"), SEGMENT_BYTES, listener,
            new AppendIdempotency(1024, 1024));
        opened.add(state);
        state.restore(dir, null);
    }

    @AfterEach
    void close()
    {
        opened.forEach(PartitionState::closeLog);
    }

    @Test
    void anAppendEntryWritesItsRecordsAtTheNextPositionsAndAnswersTheFirstAndTheCount() throws IOException
    {
        final List<String> first = answered(state.apply(5, append("a=one", "b=two", "c=three")));
        final List<String> second = answered(state.apply(6, append("d=four", "e=five")));

        assertThat(first).containsExactly("1+3 APPENDED");
        assertThat(second).containsExactly("4+2 APPENDED");
        assertThat(state.lastPosition()).isEqualTo(5);
        assertThat(state.recordLog().lastRaftIndex()).isEqualTo(6);
        assertThat(records(state.recordLog()))
            .containsExactly("1:a=one", "2:b=two", "3:c=three", "4:d=four", "5:e=five");
        assertThat(events).containsExactly("records 3 3", "records 3 5");
    }

    @Test
    void anAppendEntryAppliedAgainAfterARestartIsNotWrittenTwice() throws IOException
    {
        state.apply(5, append("a=one", "b=two"));
        state.apply(6, append("c=three"));
        final PartitionState restarted = restart(state, null, false);

        // Without a snapshot Ratis applies every entry again.
        assertThat(restarted.apply(5, append("a=one", "b=two"))).isEqualTo(PartitionState.NO_REPLY);
        assertThat(restarted.apply(6, append("c=three"))).isEqualTo(PartitionState.NO_REPLY);
        assertThat(answered(restarted.apply(9, append("d=four")))).containsExactly("4+1 APPENDED");
        assertThat(records(restarted.recordLog())).containsExactly("1:a=one", "2:b=two", "3:c=three", "4:d=four");
    }

    @Test
    void exporterPositionsOnlyMoveForward() throws IOException
    {
        state.apply(2, exporterPositions(Map.of("file", 5L, "kafka", 3L)));
        state.apply(3, exporterPositions(Map.of("file", 4L)));

        assertThat(state.exporterPosition("file")).isEqualTo(5);
        assertThat(state.exporterPosition("kafka")).isEqualTo(3);
        assertThat(state.exportedPosition()).isEqualTo(3);
        assertThat(state.compactionFloor()).isEqualTo(4);
    }

    @Test
    void aBackfillRegistrationResetsTheExporterAndRegistersTheSkippedRange() throws IOException
    {
        final PartitionBackfills backfills = wireBackfills(state);
        state.apply(2, append("a=1", "b=2", "c=3", "d=4", "e=5", "f=6", "g=7", "h=8", "i=9", "j=10"));
        state.apply(3, exporterPositions(Map.of("file", 2L, "kafka", 10L)));

        state.apply(4, PartitionEntries.backfill(new BackfillEntry.Register("bf-1", "file", 2, 1, 5_000, 10)));

        assertThat(state.exporterPosition("file")).as("reset to latest").isEqualTo(10);
        final List<BackfillTask> tasks = backfills.registry().tasksOf("bf-1");
        assertThat(tasks).hasSize(2);
        assertThat(tasks.get(0).fromPosition()).isEqualTo(3);
        assertThat(tasks.get(tasks.size() - 1).toPosition()).isEqualTo(10);
        assertThat(state.compactionFloor()).as("the tasks still need the skipped range").isEqualTo(3);

        state.apply(5, PartitionEntries.backfill(new BackfillEntry.Cancel("bf-1", 6_000)));
        assertThat(backfills.registry().unfinishedTasks()).isEmpty();
        assertThat(state.compactionFloor()).isEqualTo(11);
    }

    @Test
    void anUnreadableBackfillEntryIsSkippedAndChangesNothing() throws IOException
    {
        final PartitionBackfills backfills = wireBackfills(state);
        state.apply(2, exporterPositions(Map.of("file", 2L)));

        final UnsafeBuffer cut = PartitionEntries.backfill(new BackfillEntry.Register("bf-1", "file", 2, 1, 5_000, 10));
        assertThat(state.apply(4, new UnsafeBuffer(cut, 0, cut.capacity() - 2))).isEqualTo(PartitionState.NO_REPLY);

        assertThat(backfills.registry().tasks()).isEmpty();
        assertThat(state.exporterPosition("file")).isEqualTo(2);
    }

    @Test
    void anIdempotentAppendAnswersARepeatedIdWithItsFirstPositionsAndWritesNothing() throws IOException
    {
        final Batch keyed = new Batch(IdempotencyScope.CLIENT, 11, 12, 99, WINDOW_MS, "a=one", "b=two");
        final List<String> first = answered(state.apply(2, idempotentAppend(1_000, keyed, Batch.withoutId("c=three"))));
        final List<String> again = answered(state.apply(3, idempotentAppend(2_000,
            new Batch(IdempotencyScope.CLIENT, 11, 12, 99, WINDOW_MS, "a=one", "b=two"), Batch.withoutId("d=four"))));

        assertThat(first).containsExactly("1+2 APPENDED", "3+1 APPENDED");
        assertThat(again).containsExactly("1+2 DUPLICATE", "4+1 APPENDED");
        assertThat(records(state.recordLog())).containsExactly("1:a=one", "2:b=two", "3:c=three", "4:d=four");
        assertThat(state.idempotency().clientKeyCount()).isEqualTo(1);
    }

    @Test
    void anIdempotentAppendWhoseIdCameWithAnotherRequestIsAConflictAndWritesNothing() throws IOException
    {
        state.apply(2, idempotentAppend(1_000, new Batch(IdempotencyScope.GATEWAY, 5, 6, 1, WINDOW_MS, "a=one")));
        final List<String> conflict = answered(state.apply(3, idempotentAppend(1_001,
            new Batch(IdempotencyScope.GATEWAY, 5, 6, 2, WINDOW_MS, "a=other"))));

        assertThat(conflict).containsExactly("-1+0 CONFLICT");
        assertThat(records(state.recordLog())).containsExactly("1:a=one");
        assertThat(events).containsExactly("records 3 1");
    }

    @Test
    void aRememberedIdExpiresOnTheReplicatedClockAndAppendsAgain() throws IOException
    {
        state.apply(2, idempotentAppend(1_000, new Batch(IdempotencyScope.CLIENT, 1, 2, 3, 100, "a=one")));
        final List<String> late = answered(state.apply(3, idempotentAppend(1_100,
            new Batch(IdempotencyScope.CLIENT, 1, 2, 3, 100, "a=one"))));

        assertThat(late).containsExactly("2+1 APPENDED");
        assertThat(state.lastPosition()).isEqualTo(2);
    }

    @Test
    void anAppendEntryACrashLeftHalfWrittenIsCompletedWhenAppliedAgain() throws IOException
    {
        state.apply(5, append("a=one", "b=two", "c=six"));
        state.apply(6, idempotentAppend(1_000,
            new Batch(IdempotencyScope.CLIENT, 7, 8, 9, WINDOW_MS, "d=ten", "e=elf")));
        // A crash left the log holding only the first record (a segment rolled inside the entry, or a torn write):
        // the entries carrying the rest are applied again on restart and must write it.
        state.closeLog();
        keepOnlyTheFirstFrame();
        final PartitionState restarted = restart(state, null, false);
        assertThat(records(restarted.recordLog())).containsExactly("1:a=one");

        restarted.apply(5, append("a=one", "b=two", "c=six"));
        restarted.apply(6, idempotentAppend(1_000,
            new Batch(IdempotencyScope.CLIENT, 7, 8, 9, WINDOW_MS, "d=ten", "e=elf")));

        assertThat(records(restarted.recordLog()))
            .containsExactly("1:a=one", "2:b=two", "3:c=six", "4:d=ten", "5:e=elf");
        assertThat(answered(restarted.apply(7, append("f=end")))).containsExactly("6+1 APPENDED");
    }

    @Test
    void anIdempotentAppendAppliedAgainAfterARestartAnswersThePositionsItFirstGot() throws IOException
    {
        state.apply(2, append("x=zero"));
        state.apply(3, idempotentAppend(1_000, new Batch(IdempotencyScope.CLIENT, 7, 8, 9, WINDOW_MS, "a=one")));
        final PartitionState restarted = restart(state, null, false);

        restarted.apply(2, append("x=zero"));
        final List<String> replayed = answered(restarted.apply(3,
            idempotentAppend(1_000, new Batch(IdempotencyScope.CLIENT, 7, 8, 9, WINDOW_MS, "a=one"))));
        final List<String> retried = answered(restarted.apply(4,
            idempotentAppend(1_500, new Batch(IdempotencyScope.CLIENT, 7, 8, 9, WINDOW_MS, "a=one"))));

        assertThat(replayed).containsExactly("2+1 APPENDED");
        assertThat(retried).containsExactly("2+1 DUPLICATE");
        assertThat(records(restarted.recordLog())).containsExactly("1:x=zero", "2:a=one");
    }

    @Test
    void anEntryOfAnotherSchemaOrAnUnknownTemplateIsRefusedAndChangesNothing() throws IOException
    {
        final UnsafeBuffer otherSchema = exporterPositions(Map.of("file", 1L));
        otherSchema.putShort(4, (short)(ExporterPositionsEntryEncoder.SCHEMA_ID + 1), java.nio.ByteOrder.LITTLE_ENDIAN);
        final UnsafeBuffer unknownTemplate = exporterPositions(Map.of("file", 1L));
        unknownTemplate.putShort(2, (short)999, java.nio.ByteOrder.LITTLE_ENDIAN);

        assertThatThrownBy(() -> state.apply(2, otherSchema)).isInstanceOf(IOException.class).hasMessageContaining("schema");
        assertThatThrownBy(() -> state.apply(3, unknownTemplate)).isInstanceOf(IOException.class)
            .hasMessageContaining("unknown template 999");
        assertThat(state.exporterPosition("file")).isZero();
        assertThat(events).isEmpty();
    }

    @Test
    void anExporterMovedPastACompactedRangeHasTheRangeOnEveryReplicaAndInTheSnapshotAndHoldsNoCompaction()
        throws IOException
    {
        state.apply(2, append("a=one", "b=two", "c=three", "d=four"));
        state.apply(3, exporterPositions(Map.of("file", 4L)));
        assertThat(state.hasExporterPosition("kafka")).as("kafka is new here").isFalse();
        assertThat(state.compactionFloor()).as("a new exporter holds the log until it moved").isEqualTo(1);

        state.apply(4, entry(StateEntries.exporterPositions(Map.of("kafka", 2L), Map.of("kafka", new UnavailableRange(1, 2)))));
        state.apply(5, entry(StateEntries.exporterPositions(Map.of("kafka", 3L), Map.of("kafka", new UnavailableRange(3, 3)))));

        assertThat(state.unavailableRange("kafka")).as("touching ranges are one").isEqualTo(new UnavailableRange(1, 3));
        assertThat(state.unavailableRange("file")).isNull();
        assertThat(state.compactionFloor()).isEqualTo(4);
        final PartitionSnapshot snapshot = state.snapshot();
        final byte[] file = snapshot.encode();
        final PartitionSnapshot read = PartitionSnapshot.decode(new UnsafeBuffer(file), 0, file.length, "test");
        assertThat(read).isEqualTo(snapshot);
        assertThat(read.unavailable()).containsExactly(Map.entry("kafka", new UnavailableRange(1, 3)));
        final PartitionState restarted = restart(state, snapshot, true);
        assertThat(restarted.unavailableRange("kafka")).isEqualTo(new UnavailableRange(1, 3));
    }

    @Test
    void anExporterRemovedFromTheConfigurationNoLongerHoldsCompaction() throws IOException
    {
        state.apply(2, exporterPositions(Map.of("file", 5L, "kafka", 3L, "gone", 1L)));
        assertThat(state.compactionFloor()).as("gone is not configured").isEqualTo(4);
        final PartitionSnapshot snapshot = state.snapshot();
        state.closeLog();
        final PartitionState onlyFile = new PartitionState(0, PARTITION, Set.of("file"), SEGMENT_BYTES, listener);
        opened.add(onlyFile);
        onlyFile.restore(dir, snapshot);
        assertThat(onlyFile.exporterPosition("kafka")).as("its position is kept, should it come back").isEqualTo(3);
        assertThat(onlyFile.compactionFloor()).isEqualTo(6);
    }

    private static UnsafeBuffer entry(final org.apache.ratis.protocol.Message message)
    {
        return new UnsafeBuffer(message.getContent().toByteArray());
    }

    @Test
    void aStateRestoredFromItsSnapshotEqualsTheOriginalAndAppliesTheEntriesAfterItOnce() throws IOException
    {
        wireBackfills(state);
        state.apply(2, append("a=one", "b=two", "c=three"));
        state.apply(3, idempotentAppend(1_000, new Batch(IdempotencyScope.CLIENT, 7, 8, 9, WINDOW_MS, "d=four")));
        state.apply(4, exporterPositions(Map.of("file", 1L, "kafka", 4L)));
        state.apply(5, PartitionEntries.backfill(new BackfillEntry.Register("bf-1", "file", 1, 1, 5_000, 4)));
        state.sealAndCompactLog(state.compactionFloor());
        final PartitionSnapshot snapshot = state.snapshot();
        state.apply(7, append("e=five"));

        final PartitionState restarted = restart(state, snapshot, true);

        assertThat(restarted.snapshot()).as("the snapshot's state and the log after it")
            .isEqualTo(new PartitionSnapshot(5, 7, Map.of("file", 4L, "kafka", 4L),
                snapshot.backfills(), snapshot.idempotency()));
        assertThat(restarted.exportedPosition()).isEqualTo(4);
        assertThat(restarted.compactionFloor()).as("the backfill task survived").isEqualTo(2);
        // Ratis applies the entries after the snapshot again: written once, positions as first given.
        assertThat(restarted.apply(7, append("e=five"))).isEqualTo(PartitionState.NO_REPLY);
        final List<String> retried = answered(restarted.apply(8,
            idempotentAppend(1_500, new Batch(IdempotencyScope.CLIENT, 7, 8, 9, WINDOW_MS, "d=four"))));
        assertThat(retried).as("an id remembered in the snapshot").containsExactly("4+1 DUPLICATE");
        assertThat(records(restarted.recordLog()))
            .containsExactly("1:a=one", "2:b=two", "3:c=three", "4:d=four", "5:e=five");
    }

    @Test
    void aStateRestoredWithoutASnapshotForgetsWhatItHeld() throws IOException
    {
        state.apply(3, exporterPositions(Map.of("file", 2L)));
        state.apply(4, idempotentAppend(1_000, new Batch(IdempotencyScope.CLIENT, 7, 8, 9, WINDOW_MS, "a=one")));
        final PartitionState fresh = new PartitionState(0, PARTITION, Set.of("file", "kafka"), SEGMENT_BYTES, listener);
        opened.add(fresh);
        fresh.restore(dir.resolve("fresh"), null);
        state.closeLog();

        state.restore(dir.resolve("other"), null);

        assertThat(state.snapshot()).isEqualTo(fresh.snapshot());
        assertThat(state.exporterPosition("file")).isZero();
        assertThat(state.idempotency().clientKeyCount()).isZero();
    }

    /**
     * The leader applies the entry it proposed, a rope over the batches the command API encoded: each record goes
     * from its batch's array into the segment with no other copy, and nothing is gathered. A 1 MiB record copied
     * through any buffer on the way would allocate at least its size.
     */
    @Test
    void theLeadersOwnEntryIsWrittenFromItsBatchesArraysWithNoOtherCopy() throws Exception
    {
        state.apply(1, append("w=warm")); // the classes loaded and the segment mapped, outside what is measured
        final String big = "{\"p\":\"" + "x".repeat(1 << 20) + "\"}";
        final ByteString entry = PartitionEntries.idempotentEntry(1_000,
            new Batch(IdempotencyScope.CLIENT, 1, 2, 3, WINDOW_MS, "a=one"), Batch.withoutId("b=" + big),
            new Batch(IdempotencyScope.GATEWAY, 4, 5, 6, WINDOW_MS));
        final List<java.nio.ByteBuffer> pieces = entry.asReadOnlyByteBufferList();
        final byte[][] reply = new byte[1][];

        final Allocations.Allocated allocated = Allocations.of(() -> reply[0] = state.apply(2, pieces));

        assertThat(answered(reply[0])).containsExactly("2+1 APPENDED", "3+1 APPENDED", "4+0 APPENDED");
        assertThat(pieces).hasSize(3);
        assertThat(state.entriesAppliedInPieces()).isEqualTo(1);
        assertThat(state.gatheredBytes()).isZero();
        assertThat(allocated.heapBytes()).as("heap bytes allocated applying a 1 MiB record").isLessThan(256 * 1024);
        assertThat(allocated.directBytes()).as("direct bytes allocated applying a 1 MiB record").isLessThan(256 * 1024);
        assertThat(records(state.recordLog())).containsExactly("1:w=warm", "2:a=one", "3:b=" + big);
    }

    /** An entry whose pieces split its batches and records anywhere (none of ours does) applies the same. */
    @Test
    void anEntrySplitAcrossPiecesAnywhereAppliesAsTheSameRecords() throws IOException
    {
        final UnsafeBuffer plain = append("a=one", "b=two");
        final UnsafeBuffer idempotent = idempotentAppend(1_000,
            new Batch(IdempotencyScope.CLIENT, 7, 8, 9, WINDOW_MS, "c=three"), Batch.withoutId("d=four", "e=five"));

        assertThat(answered(state.apply(2, splitEvery(plain, 5)))).containsExactly("1+2 APPENDED");
        assertThat(answered(state.apply(3, splitEvery(idempotent, 7)))).containsExactly("3+1 APPENDED", "4+2 APPENDED");

        assertThat(records(state.recordLog())).containsExactly("1:a=one", "2:b=two", "3:c=three", "4:d=four", "5:e=five");
        assertThat(state.entriesAppliedInPieces()).isEqualTo(2);
        assertThat(state.gatheredBytes()).as("ranges across pieces were copied").isPositive();
    }

    // ------------------------------------------------------------------------------------------- helpers

    private static List<java.nio.ByteBuffer> splitEvery(final UnsafeBuffer entry, final int bytes)
    {
        final List<java.nio.ByteBuffer> pieces = new ArrayList<>();
        for (int i = 0; i < entry.capacity(); i += bytes)
        {
            pieces.add(java.nio.ByteBuffer.wrap(entry.byteArray(), i, Math.min(bytes, entry.capacity() - i)));
        }
        return pieces;
    }

    /** Closes the state's log and starts a new state on the same directory, as a broker restart does. */
    /** An append entry's reply as the proposer reads it: "first+count OUTCOME" per batch. */
    private static List<String> answered(final byte[] reply)
    {
        final AppendOutcomes outcomes = AppendReplies.decode(reply);
        assertThat(outcomes).as("an append reply").isNotNull();
        final List<String> batches = new ArrayList<>();
        for (int i = 0; i < outcomes.batchCount(); i++)
        {
            batches.add(outcomes.firstPosition(i) + "+" + outcomes.recordCount(i) + " " + outcomes.outcome(i));
        }
        return batches;
    }

    /** Cuts the record log's only segment after its first frame, as a crash inside an entry's write leaves it. */
    private void keepOnlyTheFirstFrame() throws IOException
    {
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(dir))
        {
            final Path segment = files.filter((p) -> p.getFileName().toString().startsWith("segment-")).findFirst()
                .orElseThrow();
            final byte[] bytes = java.nio.file.Files.readAllBytes(segment);
            final int firstFrame = 4 + new org.agrona.concurrent.UnsafeBuffer(bytes).getInt(0);
            java.nio.file.Files.write(segment, java.util.Arrays.copyOf(bytes, firstFrame));
        }
    }

    private PartitionState restart(final PartitionState before, final PartitionSnapshot snapshot, final boolean withBackfills)
        throws IOException
    {
        before.closeLog();
        events.clear();
        final PartitionState created = new PartitionState(0, PARTITION, Set.of("file", "kafka"), SEGMENT_BYTES,
            listener, new AppendIdempotency(1024, 1024));
        opened.add(created);
        if (withBackfills)
        {
            wireBackfills(created);
        }
        created.restore(dir, snapshot);
        return created;
    }

    private static PartitionBackfills wireBackfills(final PartitionState state)
    {
        final PartitionBackfills backfills = new PartitionBackfills(0, PARTITION, state,
            (from, to, max, consumer) -> 0,
            (exporterId, partitionId, task) ->
            {
                throw new IllegalStateException("no backfill runs here");
            },
            (entry) -> CompletableFuture.failedFuture(new IllegalStateException("not a leader")),
            new ManualExportingSwitch(),
            () -> false,
            BackfillRunnerConfig.defaults(),
            Clock.systemUTC());
        state.backfills(backfills);
        return backfills;
    }
}
