package io.sluice.broker.exporting;

import io.sluice.broker.backfill.ExportingSwitch;
import io.sluice.protocol.codecs.ExportingState;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/** A partition's exporting state as its exporters obey it, over a control replica set by hand. */
class ExportingViewTest
{
    private final HandSetStates states = new HandSetStates();
    private final ExportGate gate = new ExportGate();
    private final ExportingView view = new ExportingView(3, states, gate);

    @Test
    void exportsObeyPausedUntilTheControlReplicaCaughtUp()
    {
        states.state = ExportingState.EXPORTING;
        states.caughtUp = false;

        assertThat(view.state()).isEqualTo(ExportingState.PAUSED);
        assertThat(view.heldState()).isEqualTo(ExportingState.EXPORTING);
        assertThat(view.backfillSwitch().tryEnter()).as("no backfill batch either").isFalse();

        states.caughtUp = true;
        assertThat(view.state()).isEqualTo(ExportingState.EXPORTING);
        final ExportingSwitch backfill = view.backfillSwitch();
        assertThat(backfill.tryEnter()).isTrue();
        backfill.exit();
    }

    @Test
    void aPauseIsObeyedOnceTheGateIsPassedAndThePositionsInFlightCommitted() throws InterruptedException
    {
        final CompletableFuture<Object> positions = new CompletableFuture<>();
        view.positionsInFlight(() -> positions);
        final GateHeldElsewhere export = GateHeldElsewhere.enter(gate); // an export in flight

        final CompletableFuture<Void> paused = view.awaitObeyed(ExportingState.PAUSED);
        assertThat(paused).isNotDone();
        export.exit();
        assertThat(paused).as("positions proposed before the pause are not committed yet").isNotDone();
        positions.complete(null);
        assertThat(paused).isDone();
    }

    @Test
    void aSoftPauseWaitsForThePositionsInFlightAndAResumeForNothing()
    {
        final CompletableFuture<Object> positions = new CompletableFuture<>();
        view.positionsInFlight(() -> positions);

        final CompletableFuture<Void> softPaused = view.awaitObeyed(ExportingState.SOFT_PAUSED);
        assertThat(view.awaitObeyed(ExportingState.EXPORTING)).isDone();
        assertThat(softPaused).isNotDone();
        positions.completeExceptionally(new IllegalStateException("not leader"));
        assertThat(softPaused).as("a failed proposal is not waited for further").isCompletedWithValue(null);
    }

    @Test
    void aSoftPauseDoesNotWaitForASinkWriteInFlightButForAPositionsProposalBeingDecided() throws InterruptedException
    {
        final GateHeldElsewhere write = GateHeldElsewhere.enter(gate); // a sink write in flight, which a soft pause lets go on
        final CompletableFuture<Void> softPaused = view.awaitObeyed(ExportingState.SOFT_PAUSED);
        assertThat(softPaused).isDone();

        // the director deciding on a proposal under the state it saw
        final GateHeldElsewhere deciding = GateHeldElsewhere.enter(view.positionsGate());
        final CompletableFuture<Void> again = view.awaitObeyed(ExportingState.SOFT_PAUSED);
        final CompletableFuture<Void> paused = view.awaitObeyed(ExportingState.PAUSED);
        assertThat(again).isNotDone();
        deciding.exit();
        assertThat(again).isDone();
        assertThat(paused).as("a pause waits for the write in flight").isNotDone();
        write.exit();
        assertThat(paused).isDone();
    }

    @Test
    void aBackfillCheckpointIsStartedOnlyWhileExportingAndASoftPauseWaitsForOneStartedBefore()
    {
        final ExportingSwitch backfill = view.backfillSwitch();
        final CompletableFuture<Object> checkpoint = new CompletableFuture<>();
        assertThat(backfill.publishCheckpoint(() -> checkpoint)).isSameAs(checkpoint);

        states.state = ExportingState.SOFT_PAUSED;
        final CompletableFuture<Void> softPaused = view.awaitObeyed(ExportingState.SOFT_PAUSED);
        assertThat(softPaused).as("the checkpoint started before is not committed yet").isNotDone();
        assertThat(backfill.publishCheckpoint(() ->
        {
            throw new AssertionError("a checkpoint started under a soft pause");
        })).as("withheld").isNull();
        checkpoint.complete(null);
        assertThat(softPaused).isDone();
        assertThat(view.awaitObeyed(ExportingState.SOFT_PAUSED)).as("an answered checkpoint is not waited for").isDone();
    }

    @Test
    void aBackupsHoldSoftPausesAnExportingPartitionButLeavesAPauseAPauseAndTheOperatorsStateAsItIs()
    {
        states.backupHeld = true;
        assertThat(view.state()).as("exports go on, acknowledgements wait").isEqualTo(ExportingState.SOFT_PAUSED);
        assertThat(view.heldState()).as("what the operator set").isEqualTo(ExportingState.EXPORTING);
        final ExportingSwitch backfill = view.backfillSwitch();
        assertThat(backfill.tryEnter()).isTrue();
        assertThat(backfill.withholdsCheckpoints()).as("no backfill checkpoint either").isTrue();
        backfill.exit();

        states.state = ExportingState.PAUSED;
        assertThat(view.state()).isEqualTo(ExportingState.PAUSED);

        states.state = ExportingState.EXPORTING;
        states.backupHeld = false;
        assertThat(view.state()).isEqualTo(ExportingState.EXPORTING);
    }

    private static final class HandSetStates implements ExportingStates
    {
        volatile ExportingState state = ExportingState.EXPORTING;
        volatile boolean caughtUp = true;
        volatile boolean backupHeld;

        @Override
        public boolean backupHeld()
        {
            return backupHeld;
        }

        @Override
        public ExportingState state(final int partitionId)
        {
            return state;
        }

        @Override
        public long version(final int partitionId)
        {
            return 1;
        }

        @Override
        public boolean caughtUp()
        {
            return caughtUp;
        }
    }
}
