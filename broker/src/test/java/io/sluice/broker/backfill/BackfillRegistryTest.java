package io.sluice.broker.backfill;

import io.sluice.broker.log.codecs.BackfillAttemptFailedEntryEncoder;
import io.sluice.broker.log.codecs.BackfillCheckpointEntryEncoder;
import io.sluice.broker.log.codecs.BackfillTasksEncoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(10)
class BackfillRegistryTest
{
    private final BackfillRegistry registry = new BackfillRegistry();

    @Test
    void registrationSplitsTheSkippedRangeAndMovesTheExporterToTheEnd()
    {
        final BackfillRegistry.Registration registration =
            registry.register(new BackfillEntry.Register("b1", "file", 2, 7, 1_000), 118, 240);

        assertThat(registration.outcome()).isEqualTo(BackfillApplyOutcome.APPLIED);
        assertThat(registration.newExporterPosition()).isEqualTo(240);
        assertThat(registration.tasks()).extracting(BackfillTask::taskId, BackfillTask::fromPosition,
            BackfillTask::toPosition, BackfillTask::exportedUpTo, BackfillTask::state)
            .containsExactly(
                org.assertj.core.groups.Tuple.tuple(7, 119L, 179L, 118L, BackfillTaskState.PENDING),
                org.assertj.core.groups.Tuple.tuple(8, 180L, 240L, 179L, BackfillTaskState.PENDING));
        assertThat(registry.compactionFloor()).isEqualTo(119);
    }

    @Test
    void aSecondBackfillOfTheSameExporterIsRefusedWhileTheFirstIsUnfinished()
    {
        registry.register(new BackfillEntry.Register("b1", "file", 1, 1, 1_000), 0, 50);

        final BackfillRegistry.Registration second =
            registry.register(new BackfillEntry.Register("b2", "file", 1, 1, 2_000), 50, 90);

        assertThat(second.outcome()).isEqualTo(BackfillApplyOutcome.CONFLICT);
        assertThat(second.message()).contains("exporter file", "b1");
        assertThat(registry.tasksOf("b2")).isEmpty();

        registry.apply(new BackfillEntry.Cancel("b1", 3_000));
        assertThat(registry.register(new BackfillEntry.Register("b2", "file", 1, 1, 4_000), 50, 90).outcome())
            .isEqualTo(BackfillApplyOutcome.APPLIED);
    }

    @Test
    void aRetriedRegistrationChangesNothing()
    {
        registry.register(new BackfillEntry.Register("b1", "file", 1, 1, 1_000), 0, 50);

        final BackfillRegistry.Registration again =
            registry.register(new BackfillEntry.Register("b1", "file", 1, 1, 1_000), 50, 90);

        assertThat(again.outcome()).isEqualTo(BackfillApplyOutcome.DUPLICATE);
        assertThat(again.tasks()).singleElement().extracting(BackfillTask::toPosition).isEqualTo(50L);
    }

    @Test
    void badTaskCountsAreRefusedWithoutChange()
    {
        assertThat(registry.register(new BackfillEntry.Register("b1", "file", 0, 1, 1), 0, 50).outcome())
            .isEqualTo(BackfillApplyOutcome.INVALID_ARGUMENT);
        assertThat(registry.register(new BackfillEntry.Register("b1", "file", -2, 1, 1), 0, 50).outcome())
            .isEqualTo(BackfillApplyOutcome.INVALID_ARGUMENT);
        assertThat(registry.tasks()).isEmpty();
    }

    @Test
    void aTaskRunsCheckpointsForwardOnlyAndSucceedsAtItsEnd()
    {
        registry.register(new BackfillEntry.Register("b1", "file", 1, 1, 1_000), 10, 20);
        final BackfillTask.TaskKey key = new BackfillTask.TaskKey("b1", 1);

        assertThat(registry.apply(new BackfillEntry.Checkpoint("b1", 1, 12, 1_500)))
            .as("no checkpoint before an attempt started").isEqualTo(BackfillApplyOutcome.INVALID_TRANSITION);
        assertThat(registry.apply(new BackfillEntry.AttemptStarted("b1", 1, 2_000))).isEqualTo(BackfillApplyOutcome.APPLIED);
        assertThat(registry.apply(new BackfillEntry.Checkpoint("b1", 1, 15, 2_100))).isEqualTo(BackfillApplyOutcome.APPLIED);
        registry.apply(new BackfillEntry.Checkpoint("b1", 1, 13, 2_200));
        assertThat(registry.task(key).exportedUpTo()).isEqualTo(15);
        assertThat(registry.task(key).progress()).isEqualTo(0.5);
        assertThat(registry.apply(new BackfillEntry.Checkpoint("b1", 1, 21, 2_300)))
            .isEqualTo(BackfillApplyOutcome.INVALID_ARGUMENT);

        registry.apply(new BackfillEntry.Checkpoint("b1", 1, 20, 2_400));

        final BackfillTask task = registry.task(key);
        assertThat(task.state()).isEqualTo(BackfillTaskState.SUCCEEDED);
        assertThat(task.attempts()).isEqualTo(1);
        assertThat(task.updatedAtMs()).isEqualTo(2_400);
        assertThat(registry.compactionFloor()).isEqualTo(Long.MAX_VALUE);
        assertThat(registry.apply(new BackfillEntry.Cancel("b1", 3_000)))
            .isEqualTo(BackfillApplyOutcome.INVALID_TRANSITION);
        assertThat(registry.task(key).state()).isEqualTo(BackfillTaskState.SUCCEEDED);
    }

    @Test
    void aFailedAttemptWaitsPendingAndGivingUpEndsFailedWithTheReason()
    {
        registry.register(new BackfillEntry.Register("b1", "file", 1, 1, 1_000), 10, 20);
        final BackfillTask.TaskKey key = new BackfillTask.TaskKey("b1", 1);
        registry.apply(new BackfillEntry.AttemptStarted("b1", 1, 2_000));
        registry.apply(new BackfillEntry.Checkpoint("b1", 1, 14, 2_100));

        registry.apply(new BackfillEntry.AttemptFailed("b1", 1, "disk full", false, 2_200));
        assertThat(registry.task(key).state()).isEqualTo(BackfillTaskState.PENDING);
        assertThat(registry.task(key).exportedUpTo()).isEqualTo(14);
        assertThat(registry.compactionFloor()).isEqualTo(15);

        registry.apply(new BackfillEntry.AttemptStarted("b1", 1, 2_300));
        registry.apply(new BackfillEntry.AttemptFailed("b1", 1, "disk still full", true, 2_400));

        final BackfillTask task = registry.task(key);
        assertThat(task.state()).isEqualTo(BackfillTaskState.FAILED);
        assertThat(task.attempts()).isEqualTo(2);
        assertThat(task.failureReason()).isEqualTo("disk still full");
        assertThat(registry.apply(new BackfillEntry.AttemptStarted("b1", 1, 2_500)))
            .isEqualTo(BackfillApplyOutcome.INVALID_TRANSITION);
    }

    @Test
    void cancelEndsEveryUnfinishedTaskOfTheBackfillOnly()
    {
        registry.register(new BackfillEntry.Register("b1", "file", 3, 1, 1_000), 0, 2); // third task is empty
        registry.register(new BackfillEntry.Register("b2", "other", 1, 1, 1_000), 0, 2);

        assertThat(registry.apply(new BackfillEntry.Cancel("b1", 2_000))).isEqualTo(BackfillApplyOutcome.APPLIED);

        assertThat(registry.tasksOf("b1")).extracting(BackfillTask::state).containsExactly(
            BackfillTaskState.CANCELLED, BackfillTaskState.CANCELLED, BackfillTaskState.SUCCEEDED);
        assertThat(registry.tasksOf("b2")).extracting(BackfillTask::state).containsExactly(BackfillTaskState.PENDING);
        assertThat(registry.apply(new BackfillEntry.Cancel("nope", 2_000))).isEqualTo(BackfillApplyOutcome.UNKNOWN);
    }

    @Test
    void aPausedPartitionReportsUnfinishedTasksPending()
    {
        registry.register(new BackfillEntry.Register("b1", "file", 1, 1, 1_000), 0, 5);
        registry.apply(new BackfillEntry.AttemptStarted("b1", 1, 2_000));
        final BackfillTask task = registry.task(new BackfillTask.TaskKey("b1", 1));

        assertThat(task.reportedState(false)).isEqualTo(BackfillTaskState.RUNNING);
        assertThat(task.reportedState(true)).isEqualTo(BackfillTaskState.PENDING);
    }

    @Test
    void finishedBackfillsBeyondTheRetainedNumberAreDroppedOldestFirst()
    {
        for (int i = 0; i < BackfillRegistry.RETAINED_FINISHED_BACKFILLS + 5; i++)
        {
            registry.register(new BackfillEntry.Register("b" + i, "file", 1, 1, i), i * 10L, i * 10L); // empty: done
        }

        assertThat(registry.tasks()).hasSize(BackfillRegistry.RETAINED_FINISHED_BACKFILLS);
        assertThat(registry.tasksOf("b0")).isEmpty();
        assertThat(registry.tasksOf("b" + (BackfillRegistry.RETAINED_FINISHED_BACKFILLS + 4))).hasSize(1);
    }

    @Test
    void aSnapshotRestoresExactlyTheSameTasks()
    {
        registry.register(new BackfillEntry.Register("b1", "file", 2, 1, 1_000), 10, 30);
        registry.apply(new BackfillEntry.AttemptStarted("b1", 1, 2_000));
        registry.apply(new BackfillEntry.Checkpoint("b1", 1, 15, 2_100));
        registry.apply(new BackfillEntry.AttemptFailed("b1", 2, "sink gone \u2013 retry", false, 2_200));
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);
        final int length = registry.writeSnapshot(buffer, 3);

        final BackfillRegistry restored = new BackfillRegistry();
        restored.readSnapshot(buffer, 3, length);

        assertThat(restored.tasks()).isEqualTo(registry.tasks());
        assertThat(restored.compactionFloor()).isEqualTo(16);
    }

    @Test
    void aTruncatedSnapshotIsRejectedAndTheStateKept()
    {
        registry.register(new BackfillEntry.Register("b1", "file", 1, 1, 1_000), 10, 30);
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);
        final int length = registry.writeSnapshot(buffer, 0);
        final BackfillRegistry other = new BackfillRegistry();
        other.register(new BackfillEntry.Register("keep", "file", 1, 1, 1_000), 0, 3);

        assertThatThrownBy(() -> other.readSnapshot(buffer, 0, length - 3))
            .isInstanceOf(BackfillCodecException.class).hasMessageContaining("truncated");
        assertThat(other.tasksOf("keep")).hasSize(1);
    }

    @Test
    void everyEntryRoundTripsThroughItsEncoding()
    {
        final List<BackfillEntry> entries = List.of(
            new BackfillEntry.Register("b1", "file", 4, 9, 1_000),
            new BackfillEntry.Register("b1", "file", 4, 9, 1_000, 77),
            new BackfillEntry.AttemptStarted("b1", 9, 2_000),
            new BackfillEntry.Checkpoint("b1", 9, 1234567890123L, 3_000),
            new BackfillEntry.AttemptFailed("b1", 9, "timeout \u2013 gave up", true, 4_000),
            new BackfillEntry.AttemptFailed("b1", 9, "", false, 4_000),
            new BackfillEntry.Cancel("b1", 5_000));

        for (final BackfillEntry entry : entries)
        {
            final byte[] bytes = BackfillMessages.encode(entry);
            assertThat(BackfillMessages.decodeEntry(new UnsafeBuffer(bytes), 0, bytes.length)).isEqualTo(entry);
            final byte[] shifted = new byte[bytes.length + 5];
            System.arraycopy(bytes, 0, shifted, 3, bytes.length);
            assertThat(BackfillMessages.decodeEntry(new UnsafeBuffer(shifted), 3, bytes.length)).as("at an offset").isEqualTo(entry);
        }
    }

    @Test
    void garbageEntriesAreRejectedWithAReason()
    {
        final byte[] valid = BackfillMessages.encode(new BackfillEntry.Checkpoint("b1", 9, 5, 3_000));

        assertThatThrownBy(() -> decode(new byte[0])).hasMessageContaining("truncated");
        final byte[] otherSchema = valid.clone();
        new UnsafeBuffer(otherSchema).putShort(4, (short)9, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThatThrownBy(() -> decode(otherSchema)).hasMessageContaining("schema 9");
        final byte[] otherTemplate = valid.clone();
        new UnsafeBuffer(otherTemplate).putShort(2, (short)77, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThatThrownBy(() -> decode(otherTemplate)).hasMessageContaining("template 77");
        final byte[] shortBlock = valid.clone();
        new UnsafeBuffer(shortBlock).putShort(0, (short)4, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThatThrownBy(() -> decode(shortBlock)).hasMessageContaining("truncated");
        final byte[] hugeString = valid.clone();
        new UnsafeBuffer(hugeString).putInt(MessageHeaderEncoder.ENCODED_LENGTH + BackfillCheckpointEntryEncoder.BLOCK_LENGTH,
            Integer.MAX_VALUE, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThatThrownBy(() -> decode(hugeString)).hasMessageContaining("out of range");
        assertThatThrownBy(() -> decode(java.util.Arrays.copyOf(valid, valid.length - 1))).hasMessageContaining("truncated");
        final byte[] trailing = java.util.Arrays.copyOf(valid, valid.length + 1);
        assertThatThrownBy(() -> decode(trailing)).hasMessageContaining("trailing");
        final byte[] failed = BackfillMessages.encode(new BackfillEntry.AttemptFailed("b1", 9, "x", true, 1));
        failed[MessageHeaderEncoder.ENCODED_LENGTH + BackfillAttemptFailedEntryEncoder.giveUpEncodingOffset()] = 7;
        assertThatThrownBy(() -> decode(failed)).hasMessageContaining("giveUp code 7");
    }

    @Test
    void noSnapshotBytesAtAllHoldNoTasksAndBadOnesAreRefused()
    {
        registry.register(new BackfillEntry.Register("b1", "file", 1, 1, 1_000), 10, 30);
        registry.readSnapshot(new UnsafeBuffer(new byte[0]), 0, 0);
        assertThat(registry.tasks()).isEmpty();

        final byte[] notTasks = BackfillMessages.encode(new BackfillEntry.Cancel("b1", 1));
        assertThatThrownBy(() -> registry.readSnapshot(new UnsafeBuffer(notTasks), 0, notTasks.length))
            .isInstanceOf(BackfillCodecException.class).hasMessageContaining("template");
        final byte[] badState = BackfillMessages.encodeTasks(List.of(new BackfillTask("b1", "file", 1, 1, 2, 0, 0,
            BackfillTaskState.RUNNING, "", 1, 1)));
        badState[MessageHeaderEncoder.ENCODED_LENGTH + BackfillTasksEncoder.BLOCK_LENGTH +
            BackfillTasksEncoder.TasksEncoder.sbeHeaderSize() + BackfillTasksEncoder.TasksEncoder.stateEncodingOffset()] = 9;
        assertThatThrownBy(() -> registry.readSnapshot(new UnsafeBuffer(badState), 0, badState.length))
            .isInstanceOf(BackfillCodecException.class).hasMessageContaining("state code 9");
    }

    private static BackfillEntry decode(final byte[] bytes)
    {
        return BackfillMessages.decodeEntry(new UnsafeBuffer(bytes), 0, bytes.length);
    }
}
