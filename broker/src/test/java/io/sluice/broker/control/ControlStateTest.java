package io.sluice.broker.control;

import io.sluice.broker.log.codecs.BackfillClaimEntryEncoder;
import io.sluice.broker.log.codecs.ExportingChangeEntryEncoder;
import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimOutcome;
import io.sluice.protocol.codecs.BackfillClaimPhase;
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
        final UnsafeBuffer otherSchema = view(ControlEntries.exportingChange(ExportingChange.ofAll(1, ExportingState.PAUSED), 0, 0));
        otherSchema.putShort(4, (short)(ExportingChangeEntryEncoder.SCHEMA_ID + 1), ByteOrder.LITTLE_ENDIAN);
        final UnsafeBuffer otherTemplate = view(ControlEntries.exportingChange(ExportingChange.ofAll(1, ExportingState.PAUSED), 0, 0));
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

    // ------------------------------------------------------------------------------------------ backfill claims

    @Test
    void theFirstClaimOfAnExporterWinsAndASecondThatSawNoneIsAConflictNamingIt() throws IOException
    {
        final BackfillClaimReply first = claim("file", "bf-a", null, false, 1_000);
        final BackfillClaimReply second = claim("file", "bf-b", null, false, 1_001);

        assertThat(first.outcome()).isEqualTo(BackfillClaimOutcome.CLAIMED);
        assertThat(first.held()).isEqualTo(new BackfillClaim("file", "bf-a", BackfillClaimPhase.STARTING, 1_000, 1));
        assertThat(second.outcome()).isEqualTo(BackfillClaimOutcome.CONFLICT);
        assertThat(second.held().backfillId()).isEqualTo("bf-a");
        assertThat(second.reason()).contains("backfill bf-a took the claim of exporter 'file' while this reset was checked");
        assertThat(claims().claim("file")).isEqualTo(first.held());
        assertThat(claim("other", "bf-c", null, false, 1_002).outcome()).as("claims are per exporter")
            .isEqualTo(BackfillClaimOutcome.CLAIMED);
    }

    @Test
    void ofTwoResetsThatSawTheSameStartedClaimOnlyTheFirstAppliedTakesIt() throws IOException
    {
        claim("file", "bf-old", null, false, 1_000);
        final BackfillClaim started = change(BackfillClaimAction.STARTED, "file", "bf-old", 1_100).held();

        final BackfillClaimReply winner = claim("file", "bf-1", started, false, 5_000);
        final BackfillClaimReply loser = claim("file", "bf-2", started, false, 5_000);

        assertThat(winner.outcome()).isEqualTo(BackfillClaimOutcome.CLAIMED);
        assertThat(winner.reason()).contains("over from backfill bf-old (STARTED");
        assertThat(loser.outcome()).isEqualTo(BackfillClaimOutcome.CONFLICT);
        assertThat(loser.held().backfillId()).isEqualTo("bf-1");
        assertThat(loser.reason()).contains("backfill bf-1 took the claim").contains("STARTING");
        assertThat(claims().claim("file").backfillId()).isEqualTo("bf-1");
    }

    @Test
    void aStartingClaimIsTakenOverOnlyOnceTheBoundHasPassedByTheEntriesClock() throws IOException
    {
        final BackfillClaim starting = claim("file", "bf-dead", null, false, 10_000).held();

        final BackfillClaimReply early = claim("file", "bf-new", starting, false,
            10_000 + BackfillClaimTable.STARTING_TAKEOVER_MS - 1);
        assertThat(early.outcome()).as("being started right now").isEqualTo(BackfillClaimOutcome.CONFLICT);
        assertThat(early.reason()).contains("backfill bf-dead holds the claim of exporter 'file' and is being started")
            .contains("claimed " + (BackfillClaimTable.STARTING_TAKEOVER_MS - 1) + " ms before this reset");
        assertThat(claims().claim("file")).isEqualTo(starting);

        final BackfillClaimReply late = claim("file", "bf-new", starting, false,
            10_000 + BackfillClaimTable.STARTING_TAKEOVER_MS);
        assertThat(late.outcome()).isEqualTo(BackfillClaimOutcome.CLAIMED);
        assertThat(late.reason()).contains("over from backfill bf-dead (STARTING");
        assertThat(claims().claim("file").backfillId()).isEqualTo("bf-new");
        assertThat(claims().claim("file").claimedAtMs()).isEqualTo(10_000 + BackfillClaimTable.STARTING_TAKEOVER_MS);
        // The dead gateway's late STARTED changes nothing: the claim is not its own any more.
        assertThat(change(BackfillClaimAction.STARTED, "file", "bf-dead", 80_000).outcome())
            .isEqualTo(BackfillClaimOutcome.NOT_HELD);
    }

    @Test
    void aResetThatSawTheClaimStartingIsAConflictOnceItStartedEvenAfterTheBound() throws IOException
    {
        // The reset checked the partitions while bf-x was registering, so its check says nothing about bf-x's tasks.
        final BackfillClaim starting = claim("file", "bf-x", null, false, 1_000).held();
        change(BackfillClaimAction.STARTED, "file", "bf-x", 1_500);

        final BackfillClaimReply reply = claim("file", "bf-y", starting, false, 1_000 + 10 * BackfillClaimTable.STARTING_TAKEOVER_MS);

        assertThat(reply.outcome()).isEqualTo(BackfillClaimOutcome.CONFLICT);
        assertThat(reply.held().phase()).isEqualTo(BackfillClaimPhase.STARTED);
        assertThat(reply.reason()).contains("backfill bf-x took the claim");
        assertThat(claims().claim("file").backfillId()).isEqualTo("bf-x");
    }

    @Test
    void aClaimThatSawAClaimReleasedMeanwhileIsAConflict() throws IOException
    {
        final BackfillClaim starting = claim("file", "bf-a", null, false, 1_000).held();
        assertThat(change(BackfillClaimAction.RELEASE, "file", "bf-a", 1_100).outcome())
            .isEqualTo(BackfillClaimOutcome.RELEASED);
        assertThat(claims().claim("file")).isNull();

        final BackfillClaimReply reply = claim("file", "bf-b", starting, false, 100_000);

        assertThat(reply.outcome()).isEqualTo(BackfillClaimOutcome.CONFLICT);
        assertThat(reply.held()).isNull();
        assertThat(reply.reason()).contains("(backfill bf-a, STARTING) was released meanwhile");
        assertThat(claim("file", "bf-b", null, false, 100_001).outcome()).isEqualTo(BackfillClaimOutcome.CLAIMED);
    }

    @Test
    void startedAndReleaseActOnlyOnTheBackfillsOwnClaim() throws IOException
    {
        claim("file", "bf-a", null, false, 1_000);

        assertThat(change(BackfillClaimAction.STARTED, "file", "bf-b", 1_001).outcome()).isEqualTo(BackfillClaimOutcome.NOT_HELD);
        assertThat(change(BackfillClaimAction.RELEASE, "file", "bf-b", 1_002).reason())
            .contains("backfill bf-b does not hold the claim of exporter 'file' (backfill bf-a");
        assertThat(change(BackfillClaimAction.STARTED, "none", "bf-a", 1_003).outcome()).isEqualTo(BackfillClaimOutcome.NOT_HELD);
        assertThat(claims().claim("file").phase()).isEqualTo(BackfillClaimPhase.STARTING);

        final BackfillClaimReply started = change(BackfillClaimAction.STARTED, "file", "bf-a", 1_004);
        assertThat(started.outcome()).isEqualTo(BackfillClaimOutcome.STARTED);
        assertThat(started.held()).isEqualTo(new BackfillClaim("file", "bf-a", BackfillClaimPhase.STARTED, 1_000, 1));
        assertThat(change(BackfillClaimAction.STARTED, "file", "bf-a", 1_005).outcome()).as("twice")
            .isEqualTo(BackfillClaimOutcome.STARTED);
        assertThat(claims().claim("file")).isEqualTo(started.held());
    }

    @Test
    void theSameClaimCommittedTwiceHoldsItOnceAndKeepsItsTime() throws IOException
    {
        final BackfillClaimReply first = claim("file", "bf-a", null, false, 1_000);
        final BackfillClaimReply again = claim("file", "bf-a", null, false, 2_000);

        assertThat(again.outcome()).isEqualTo(BackfillClaimOutcome.CLAIMED);
        assertThat(again.held()).isEqualTo(first.held());
        assertThat(again.reason()).contains("holds the claim of exporter 'file' already");
    }

    @Test
    void anEmptyBackfillIsStartedAtOnceRecordedAndOnlyTheLatestAreKept() throws IOException
    {
        final BackfillClaimReply empty = claim("file", "bf-empty-0", null, true, 1_000);
        assertThat(empty.outcome()).isEqualTo(BackfillClaimOutcome.CLAIMED);
        assertThat(empty.held().phase()).as("nothing to register").isEqualTo(BackfillClaimPhase.STARTED);
        assertThat(claims().emptyBackfills()).containsExactly(new EmptyBackfill("bf-empty-0", "file", 1_000));

        BackfillClaim seen = empty.held();
        for (int i = 1; i <= BackfillClaimTable.MAX_EMPTY_BACKFILLS; i++)
        {
            final BackfillClaimReply next = claim("file", "bf-empty-" + i, seen, true, 1_000 + i);
            assertThat(next.outcome()).as("a started claim is taken over").isEqualTo(BackfillClaimOutcome.CLAIMED);
            seen = next.held();
        }
        final List<EmptyBackfill> kept = claims().emptyBackfills();
        assertThat(kept).hasSize(BackfillClaimTable.MAX_EMPTY_BACKFILLS);
        assertThat(kept.get(0).backfillId()).as("the oldest went first").isEqualTo("bf-empty-1");
        assertThat(kept.get(kept.size() - 1)).isEqualTo(new EmptyBackfill("bf-empty-32", "file",
            1_000 + BackfillClaimTable.MAX_EMPTY_BACKFILLS));
        // A refused claim records nothing.
        assertThat(claim("file", "bf-refused", null, true, 9_000).outcome()).isEqualTo(BackfillClaimOutcome.CONFLICT);
        assertThat(claims().emptyBackfills()).hasSize(BackfillClaimTable.MAX_EMPTY_BACKFILLS)
            .noneMatch((e) -> e.backfillId().equals("bf-refused"));
    }

    @Test
    void everyReplicaAnswersTheSameAndHoldsTheSameClaims() throws IOException
    {
        final ControlState other = new ControlState(2, PARTITIONS, (p) -> { });
        final List<byte[]> entries = List.of(
            ClaimCodes.encodeEntry(BackfillClaimChange.claim("file", "bf-1", null, false, 1_000, 0)),
            ClaimCodes.encodeEntry(BackfillClaimChange.claim("file", "bf-2", null, false, 1_000, 1)),
            ClaimCodes.encodeEntry(BackfillClaimChange.of(BackfillClaimAction.STARTED, "file", "bf-1", 1_200, 0)),
            ClaimCodes.encodeEntry(BackfillClaimChange.claim("search", "bf-3", null, true, 1_300, 2)),
            ClaimCodes.encodeEntry(BackfillClaimChange.claim("file", "bf-4",
                new BackfillClaim("file", "bf-1", BackfillClaimPhase.STARTED, 1_000, 1), false, 90_000, 1)));
        for (final byte[] entry : entries)
        {
            final long at = ++index;
            assertThat(state.apply(at, new UnsafeBuffer(entry))).isEqualTo(other.apply(at, new UnsafeBuffer(entry)));
        }
        assertThat(other.snapshot()).isEqualTo(state.snapshot());
        assertThat(state.backfillClaims().claim("file").backfillId()).isEqualTo("bf-4");
    }

    @Test
    void aLeaderRegistersOnlyForTheClaimsOwnStartWithinTheWindow() throws IOException
    {
        final BackfillClaimTable table = claims();
        claim("file", "bf-a", null, false, 1_000);

        assertThat(table.registrationRefusal("file", "bf-a", true, 1_000 + BackfillClaimTable.REGISTRATION_WINDOW_MS - 1))
            .isNull();
        assertThat(table.registrationRefusal("file", "bf-a", true, 1_000 + BackfillClaimTable.REGISTRATION_WINDOW_MS))
            .contains("registrations are taken within " + BackfillClaimTable.REGISTRATION_WINDOW_MS + " ms");
        assertThat(table.registrationRefusal("file", "bf-b", true, 1_001))
            .contains("backfill bf-b does not hold the claim of exporter 'file' (backfill bf-a");
        assertThat(table.registrationRefusal("search", "bf-a", true, 1_001)).contains("nobody does");
        assertThat(table.registrationRefusal("file", "bf-b", false, 1_001)).as("no claim named, another being started")
            .contains("is being started");
        assertThat(table.registrationRefusal("file", "bf-b", false, 1_000 + BackfillClaimTable.STARTING_TAKEOVER_MS))
            .as("a claim past the takeover bound no longer stops a start without a claim").isNull();

        change(BackfillClaimAction.STARTED, "file", "bf-a", 1_500);
        assertThat(table.registrationRefusal("file", "bf-a", true, 1_600)).contains("is started already");
        assertThat(table.registrationRefusal("file", "bf-b", false, 1_600)).isNull();
    }

    @Test
    void aClaimEntryCutShortOrWithUnknownCodesIsRefusedAndChangesNothing()
    {
        final byte[] entry = ClaimCodes.encodeEntry(BackfillClaimChange.claim("file", "bf-a", null, false, 1_000, 0));
        final byte[] cut = java.util.Arrays.copyOf(entry, entry.length - 3);
        final byte[] longText = entry.clone();
        // The exporter id's length: after the header (8) and the block.
        new UnsafeBuffer(longText).putInt(8 + BackfillClaimEntryEncoder.BLOCK_LENGTH, 1 << 30, ByteOrder.LITTLE_ENDIAN);
        final byte[] badAction = entry.clone();
        badAction[8 + BackfillClaimEntryEncoder.actionEncodingOffset()] = 9;
        final byte[] badExpectation = ClaimCodes.encodeEntry(BackfillClaimChange.claim("file", "bf-a", null, false, 1_000, 0));
        badExpectation[8 + BackfillClaimEntryEncoder.expectedPhaseEncodingOffset()] = 2; // STARTED, but no backfill named

        for (final byte[] bad : List.of(cut, longText, badAction, badExpectation))
        {
            assertThatThrownBy(() -> state.apply(++index, new UnsafeBuffer(bad))).isInstanceOf(IOException.class)
                .hasMessageContaining("backfill claim");
        }
        assertThat(claims().claims()).isEmpty();
    }

    @Test
    void aStateWithClaimsAndEmptyBackfillsRestoredFromItsSnapshotEqualsTheOriginal() throws IOException
    {
        apply(ExportingChange.of(4, ExportingState.PAUSED, 2));
        claim("file", "bf-a", null, false, 1_000);
        claim("search", "bf-e1", null, true, 2_000);
        final BackfillClaim e1 = claims().claim("search");
        claim("search", "bf-e2", e1, true, 3_000);
        final Path file = dir.resolve("snapshot.1_9");
        state.snapshot().writeTo(file);

        final ControlState restored = new ControlState(1, PARTITIONS, (p) -> { });
        restored.restore(ControlSnapshot.readFrom(file));

        assertThat(restored.snapshot()).isEqualTo(state.snapshot());
        assertThat(restored.backfillClaims().claims()).containsExactly(
            new BackfillClaim("file", "bf-a", BackfillClaimPhase.STARTING, 1_000, index - 2),
            new BackfillClaim("search", "bf-e2", BackfillClaimPhase.STARTED, 3_000, index));
        assertThat(restored.backfillClaims().emptyBackfills()).containsExactly(
            new EmptyBackfill("bf-e1", "search", 2_000), new EmptyBackfill("bf-e2", "search", 3_000));
        assertThat(restored.stamp(2)).isEqualTo(new ExportingStamp(ExportingState.PAUSED, 4));
        // The restored replica goes on deciding as the original does.
        assertThat(decode(restored.apply(++index, new UnsafeBuffer(ClaimCodes.encodeEntry(
            BackfillClaimChange.claim("file", "bf-b", null, false, 4_000, 0)))), "file").outcome())
            .isEqualTo(BackfillClaimOutcome.CONFLICT);

        restored.restore(null);
        assertThat(restored.backfillClaims().claims()).isEmpty();
        assertThat(restored.backfillClaims().emptyBackfills()).isEmpty();
    }

    @Test
    void aSnapshotCutShortInItsClaimsIsRefusedByName() throws IOException
    {
        claim("file", "bf-a", null, false, 1_000);
        final byte[] whole = state.snapshot().encode();
        final Path cut = Files.write(dir.resolve("cut-claims"), java.util.Arrays.copyOf(whole, whole.length - 5));

        assertThatThrownBy(() -> ControlSnapshot.readFrom(cut)).isInstanceOf(IOException.class)
            .hasMessageContaining(cut.toString());
    }

    private BackfillClaimTable claims()
    {
        return state.backfillClaims();
    }

    private BackfillClaimReply claim(
        final String exporterId, final String backfillId, final BackfillClaim seen, final boolean empty, final long atMs)
        throws IOException
    {
        return decode(state.apply(++index, new UnsafeBuffer(ClaimCodes.encodeEntry(
            BackfillClaimChange.claim(exporterId, backfillId, seen, empty, atMs, 0)))), exporterId);
    }

    private BackfillClaimReply change(
        final BackfillClaimAction action, final String exporterId, final String backfillId, final long atMs)
        throws IOException
    {
        return decode(state.apply(++index, view(ControlEntries.backfillClaim(
            BackfillClaimChange.of(action, exporterId, backfillId, atMs, 0)))), exporterId);
    }

    private static BackfillClaimReply decode(final byte[] reply, final String exporterId) throws IOException
    {
        assertThat(reply).as("a claim entry answers its proposer").isNotNull();
        return ClaimCodes.decodeResult(new UnsafeBuffer(reply), exporterId);
    }

    private void apply(final ExportingChange change) throws IOException
    {
        apply(change, 0);
    }

    private void apply(final ExportingChange change, final long atMicros) throws IOException
    {
        state.apply(++index, view(ControlEntries.exportingChange(change, 0, atMicros)));
    }

    // ------------------------------------------------------------------------------------------- pause leases

    private static final long T0 = 1_764_000_000_000_000L;
    private static final long SECOND = 1_000_000L;

    @Test
    void aLeasedPauseRunsOutAtItsTimeAndItsExpiryResumesEveryPartitionAtTheSameVersion() throws IOException
    {
        apply(ExportingChange.ofAll(5, ExportingState.PAUSED).withLease(3 * SECOND), T0);
        told.clear();

        assertThat(state.stamp(2)).isEqualTo(new ExportingStamp(ExportingState.PAUSED, 5, T0, T0 + 3 * SECOND, 0));
        assertThat(state.expiredLeases(T0 + 3 * SECOND - 1)).isEmpty();
        assertThat(state.expiredLeases(T0 + 3 * SECOND)).isEqualTo(Map.of(1, 5L, 2, 5L, 3, 5L, 4, 5L));

        expire(Map.of(1, 5L, 2, 5L, 3, 5L, 4, 5L), T0 + 3 * SECOND + 100);

        for (int p = 1; p <= PARTITIONS; p++)
        {
            assertThat(state.stamp(p)).isEqualTo(
                new ExportingStamp(ExportingState.EXPORTING, 5, T0 + 3 * SECOND + 100, 0, T0 + 3 * SECOND + 100));
        }
        assertThat(told).containsExactly(1, 2, 3, 4);
        assertThat(state.leaseExpiries()).isEqualTo(1);
        assertThat(state.expiredLeases(T0 + 100 * SECOND)).isEmpty();
    }

    @Test
    void aLaterPauseReplacesTheLeaseAndTheOldLeasesExpiryChangesNothing() throws IOException
    {
        apply(ExportingChange.ofAll(5, ExportingState.SOFT_PAUSED).withLease(3 * SECOND), T0);
        apply(ExportingChange.of(6, ExportingState.PAUSED, 1).withLease(60 * SECOND), T0 + SECOND);
        apply(ExportingChange.of(7, ExportingState.PAUSED, 2), T0 + SECOND);

        assertThat(state.expiredLeases(T0 + 4 * SECOND)).as("partitions 3 and 4 still hold the first lease")
            .isEqualTo(Map.of(3, 5L, 4, 5L));
        expire(Map.of(1, 5L, 2, 5L, 3, 5L, 4, 5L), T0 + 4 * SECOND);

        assertThat(state.stamp(1)).isEqualTo(new ExportingStamp(ExportingState.PAUSED, 6, T0 + SECOND, T0 + 61 * SECOND, 0));
        assertThat(state.stamp(2)).as("a pause without lease holds for good")
            .isEqualTo(new ExportingStamp(ExportingState.PAUSED, 7, T0 + SECOND, 0, 0));
        assertThat(state.stamp(3).state()).isEqualTo(ExportingState.EXPORTING);
        assertThat(state.stamp(4).state()).isEqualTo(ExportingState.EXPORTING);
        assertThat(state.expiredLeases(T0 + 1000 * SECOND)).isEqualTo(Map.of(1, 6L));
    }

    @Test
    void aResumeEndsTheLeaseAndAnExpiryOrALatePauseOfAnOlderVersionCannotHoldAgain() throws IOException
    {
        apply(ExportingChange.ofAll(5, ExportingState.PAUSED).withLease(3 * SECOND), T0);
        apply(ExportingChange.ofAll(6, ExportingState.EXPORTING), T0 + SECOND);
        expire(Map.of(1, 5L), T0 + 4 * SECOND);
        apply(ExportingChange.ofAll(5, ExportingState.PAUSED).withLease(3 * SECOND), T0 + 5 * SECOND);

        assertThat(state.stamp(1)).isEqualTo(new ExportingStamp(ExportingState.EXPORTING, 6, T0 + SECOND, 0, 0));
        assertThat(state.leaseExpiries()).as("the expiry ended no hold").isZero();
        assertThat(state.expiredLeases(T0 + 1000 * SECOND)).isEmpty();
    }

    @Test
    void theSameExpiryAppliedTwiceAndTheSamePauseAfterItChangeNothing() throws IOException
    {
        apply(ExportingChange.of(5, ExportingState.PAUSED, 1).withLease(SECOND), T0);
        expire(Map.of(1, 5L), T0 + 2 * SECOND);
        final ExportingStamp ended = state.stamp(1);
        expire(Map.of(1, 5L), T0 + 3 * SECOND);
        apply(ExportingChange.of(5, ExportingState.PAUSED, 1).withLease(SECOND), T0 + 3 * SECOND);

        assertThat(state.stamp(1)).isEqualTo(ended);
        assertThat(state.leaseExpiries()).isEqualTo(1);
    }

    @Test
    void aSnapshotKeepsLeasesTheirTimesAndTheExpiryCount() throws IOException
    {
        apply(ExportingChange.of(5, ExportingState.PAUSED, 1).withLease(SECOND), T0);
        expire(Map.of(1, 5L), T0 + 2 * SECOND);
        apply(ExportingChange.of(6, ExportingState.SOFT_PAUSED, 2, 3).withLease(30 * SECOND), T0 + 3 * SECOND);

        final byte[] bytes = state.snapshot().encode();
        final ControlState restored = new ControlState(1, PARTITIONS, (p) -> { });
        restored.restore(ControlSnapshot.decode(new UnsafeBuffer(bytes), 0, bytes.length, "test"));

        for (int p = 1; p <= PARTITIONS; p++)
        {
            assertThat(restored.stamp(p)).isEqualTo(state.stamp(p));
        }
        assertThat(restored.leaseExpiries()).isEqualTo(1);
        assertThat(restored.expiredLeases(T0 + 33 * SECOND)).isEqualTo(Map.of(2, 6L, 3, 6L));
    }

    @Test
    void aControlSnapshotOfSchemaVersion4ReadsAsHoldingNoLease() throws IOException
    {
        // Written as version 4 laid it out: no root fields, partitions of 13 bytes, then empty claims and backfills.
        final java.nio.ByteBuffer v4 = java.nio.ByteBuffer.allocate(8 + 4 + 13 + 4 + 4).order(ByteOrder.LITTLE_ENDIAN);
        v4.putShort((short)0).putShort((short)52).putShort((short)2).putShort((short)4);
        v4.putShort((short)13).putShort((short)1);
        v4.putInt(3).put((byte)1).putLong(9);
        v4.putShort((short)17).putShort((short)0);
        v4.putShort((short)8).putShort((short)0);

        final ControlSnapshot snapshot = ControlSnapshot.decode(new UnsafeBuffer(v4.array()), 0, v4.capacity(), "v4");

        assertThat(snapshot.partitions()).isEqualTo(Map.of(3, new ExportingStamp(ExportingState.PAUSED, 9)));
        assertThat(snapshot.leaseExpiries()).isZero();
    }

    // ------------------------------------------------------------------------------------------- backup holds

    @Test
    void aBackupsHoldIsItsOwnStateAndAnOperatorsPauseOrResumeNeitherEndsNorIsUndoneByIt() throws IOException
    {
        apply(ExportingChange.ofAll(5, ExportingState.PAUSED), T0);
        told.clear();

        assertThat(hold(7, HOLD_TAKE, 60 * SECOND, T0 + SECOND).outcome()).isEqualTo(BackupHold.Outcome.TAKEN);
        assertThat(state.backupHold()).isEqualTo(new BackupHold(7, T0 + SECOND, T0 + 61 * SECOND));
        assertThat(told).as("every partition's exporters are told").containsExactly(1, 2, 3, 4);
        assertThat(state.stamp(1).state()).as("the operator's pause is kept").isEqualTo(ExportingState.PAUSED);

        apply(ExportingChange.ofAll(6, ExportingState.EXPORTING), T0 + 2 * SECOND);
        assertThat(state.stamp(1).state()).isEqualTo(ExportingState.EXPORTING);
        assertThat(state.backupHold()).as("a resume does not release the backup's hold").isNotNull();

        assertThat(hold(7, HOLD_RELEASE, 0, T0 + 3 * SECOND).outcome()).isEqualTo(BackupHold.Outcome.RELEASED);
        assertThat(state.backupHold()).isNull();
        assertThat(state.stamp(1).state()).as("the resume stays as the operator left it").isEqualTo(ExportingState.EXPORTING);
        assertThat(hold(7, HOLD_RELEASE, 0, T0 + 4 * SECOND).outcome()).isEqualTo(BackupHold.Outcome.NOT_HELD);
    }

    @Test
    void aSecondBackupsHoldIsRefusedUntilTheFirstIsReleasedOrItsLeaseRanOut() throws IOException
    {
        hold(7, HOLD_TAKE, 10 * SECOND, T0);

        final BackupHold.Reply refused = hold(8, HOLD_TAKE, 10 * SECOND, T0 + 9 * SECOND);
        assertThat(refused.outcome()).isEqualTo(BackupHold.Outcome.CONFLICT);
        assertThat(refused.held().backupId()).isEqualTo(7);
        assertThat(hold(8, HOLD_RELEASE, 0, T0 + 9 * SECOND).outcome()).as("another backup's release changes nothing")
            .isEqualTo(BackupHold.Outcome.NOT_HELD);
        assertThat(hold(7, HOLD_TAKE, 10 * SECOND, T0 + 9 * SECOND).held())
            .as("the same backup again changes nothing").isEqualTo(new BackupHold(7, T0, T0 + 10 * SECOND));

        // The lease ran out by the entry's own time, though no expiry entry was applied yet.
        assertThat(hold(8, HOLD_TAKE, 10 * SECOND, T0 + 10 * SECOND).outcome()).isEqualTo(BackupHold.Outcome.TAKEN);
        assertThat(state.backupHold().backupId()).isEqualTo(8);
    }

    @Test
    void aHoldWhoseLeaseRanOutIsEndedByTheLeaseExpiryEntryAndAWaiterSeesItTaken() throws IOException
    {
        final CompletableFuture<BackupHold> waiter = state.awaitBackupHold(9);
        assertThat(waiter).isNotDone();
        hold(9, HOLD_TAKE, 5 * SECOND, T0);
        assertThat(waiter).isCompletedWithValue(new BackupHold(9, T0, T0 + 5 * SECOND));

        assertThat(state.expiredBackupHold(T0 + 5 * SECOND - 1)).isZero();
        assertThat(state.expiredBackupHold(T0 + 5 * SECOND)).isEqualTo(9);
        told.clear();
        state.apply(++index, view(ControlEntries.leaseExpiry(new java.util.TreeMap<>(), 8, 0, T0 + 5 * SECOND)));
        assertThat(state.backupHold()).as("an expiry of another backup changes nothing").isNotNull();
        state.apply(++index, view(ControlEntries.leaseExpiry(new java.util.TreeMap<>(), 9, 0, T0 + 5 * SECOND)));
        assertThat(state.backupHold()).isNull();
        assertThat(told).containsExactly(1, 2, 3, 4);
    }

    @Test
    void aSnapshotKeepsTheBackupHold() throws IOException
    {
        hold(11, HOLD_TAKE, 60 * SECOND, T0);
        final ControlSnapshot snapshot = state.snapshot();
        final ControlSnapshot decoded = ControlSnapshot.decode(new UnsafeBuffer(snapshot.encode()), 0,
            snapshot.encode().length, "test");
        assertThat(decoded.backupHold()).isEqualTo(new BackupHold(11, T0, T0 + 60 * SECOND));

        final ControlState restored = new ControlState(1, PARTITIONS, (p) -> { });
        restored.restore(decoded);
        assertThat(restored.backupHold()).isEqualTo(state.backupHold());
        restored.restore(new ControlSnapshot(Map.of()));
        assertThat(restored.backupHold()).isNull();
    }

    private static final io.sluice.broker.log.codecs.BackupHoldActionCode HOLD_TAKE =
        io.sluice.broker.log.codecs.BackupHoldActionCode.TAKE;
    private static final io.sluice.broker.log.codecs.BackupHoldActionCode HOLD_RELEASE =
        io.sluice.broker.log.codecs.BackupHoldActionCode.RELEASE;

    private BackupHold.Reply hold(
        final long backupId, final io.sluice.broker.log.codecs.BackupHoldActionCode action, final long leaseMicros,
        final long atMicros) throws IOException
    {
        final byte[] reply = state.apply(++index, view(ControlEntries.backupHold(backupId, action, leaseMicros, 0,
            atMicros)));
        return BackupHolds.decodeResult(new UnsafeBuffer(reply));
    }

    private void expire(final Map<Integer, Long> expired, final long atMicros) throws IOException
    {
        state.apply(++index, view(ControlEntries.leaseExpiry(new java.util.TreeMap<>(expired), 0, 0, atMicros)));
    }

    private static UnsafeBuffer view(final Message entry)
    {
        return new UnsafeBuffer(entry.getContent().toByteArray());
    }
}
