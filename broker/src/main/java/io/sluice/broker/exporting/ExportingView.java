package io.sluice.broker.exporting;

import io.sluice.broker.backfill.ExportingSwitch;
import io.sluice.protocol.codecs.ExportingState;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * One partition's exporting state as its exporters on this broker obey it, and the way to wait until they do.
 * <p>
 * {@link #state()} is what the director and the backfill runners check, inside the {@link ExportGate}, before every
 * export: the control group replica's state for the partition once the replica has caught up, PAUSED before (a
 * restarted or emptied replica may hold an older state than a pause that was answered). {@link #heldState()} and
 * {@link #version()} are what the replica holds, for status and answers. Thread-safe.
 */
public final class ExportingView
{
    private final int partitionId;
    private final ExportingStates states;
    private final ExportGate gate;
    /**
     * Held only while the director decides on and publishes a positions proposal: a soft pause waits for it, never for
     * a sink write in flight under the export gate (a soft-paused partition goes on exporting, so nothing to wait for).
     */
    private final ExportGate positionsGate = new ExportGate();
    private volatile Supplier<CompletableFuture<?>> positionsInFlight = () -> CompletableFuture.completedFuture(null);
    /** Backfill checkpoints started inside the positions gate and not answered yet, which a pause's answer waits for. */
    private final Set<CompletableFuture<?>> checkpointsInFlight = ConcurrentHashMap.newKeySet();

    public ExportingView(final int partitionId, final ExportingStates states, final ExportGate gate)
    {
        this.partitionId = partitionId;
        this.states = states;
        this.gate = gate;
    }

    /** Wires in the director's acknowledged positions still being replicated. */
    void positionsInFlight(final Supplier<CompletableFuture<?>> positionsInFlight)
    {
        this.positionsInFlight = positionsInFlight;
    }

    /**
     * The state exports obey now: PAUSED until the control replica caught up; SOFT_PAUSED for an exporting partition
     * while a backup's hold is in place (the operator's state underneath is kept: {@link #heldState()}).
     */
    public ExportingState state()
    {
        if (!states.caughtUp())
        {
            return ExportingState.PAUSED;
        }
        final ExportingState held = states.state(partitionId);
        return held == ExportingState.EXPORTING && states.backupHeld() ? ExportingState.SOFT_PAUSED : held;
    }

    public ExportingState heldState()
    {
        return states.state(partitionId);
    }

    public io.sluice.protocol.cluster.ExportingHold hold()
    {
        return states.hold(partitionId);
    }

    public long version()
    {
        return states.version(partitionId);
    }

    public ExportGate gate()
    {
        return gate;
    }

    /** Where the director decides on a positions proposal and publishes it (see {@link #awaitObeyed}). */
    ExportGate positionsGate()
    {
        return positionsGate;
    }

    /**
     * Completes once this broker's exporters of the partition obey {@code held}, a state the replica applied before
     * this call: for PAUSED, once the export gate was passed (an export in flight ended; later ones see the pause);
     * for PAUSED and SOFT_PAUSED, once acknowledged positions proposed and backfill checkpoints started before are
     * committed (so none lands after the answer). A soft pause does not wait for a sink write in flight: a slow sink would delay it (and a backup's hold)
     * for nothing, since exports go on under it. Nothing to wait for when exporting resumes. Never blocks the caller.
     */
    public CompletableFuture<Void> awaitObeyed(final ExportingState held)
    {
        if (held == ExportingState.EXPORTING)
        {
            return CompletableFuture.completedFuture(null);
        }
        final CompletableFuture<Void> exports = held == ExportingState.PAUSED ? gate.awaitPassed() :
            CompletableFuture.completedFuture(null);
        // The director's positions proposals and the backfill checkpoints are started inside the positions gate, after
        // checking the state there: once it is passed, one is either started (and awaited here) or never under this state.
        return exports
            .thenCompose((passed) -> positionsGate.awaitPassed())
            .thenCompose((passed) -> CompletableFuture.allOf(inFlight()))
            .handle((ignored, error) -> null); // a failed proposal is not waited for further
    }

    /** The director's positions proposal and the backfill checkpoints started and not answered yet. */
    private CompletableFuture<?>[] inFlight()
    {
        final List<CompletableFuture<?>> all = new ArrayList<>(checkpointsInFlight);
        all.add(positionsInFlight.get());
        return all.toArray(CompletableFuture[]::new);
    }

    /** How backfill runners see this state: a batch is exported inside the gate after seeing a state other than PAUSED. */
    public ExportingSwitch backfillSwitch()
    {
        return new ExportingSwitch()
        {
            @Override
            public boolean tryEnter()
            {
                gate.enter();
                if (state() == ExportingState.PAUSED)
                {
                    gate.exit();
                    return false;
                }
                return true;
            }

            @Override
            public void exit()
            {
                gate.exit();
            }

            @Override
            public boolean withholdsCheckpoints()
            {
                return state() != ExportingState.EXPORTING;
            }

            @Override
            public CompletableFuture<?> publishCheckpoint(final Supplier<CompletableFuture<?>> replicate)
            {
                positionsGate.enter();
                try
                {
                    if (state() != ExportingState.EXPORTING)
                    {
                        return null;
                    }
                    final CompletableFuture<?> started = replicate.get();
                    checkpointsInFlight.add(started);
                    started.whenComplete((r, e) -> checkpointsInFlight.remove(started));
                    return started;
                }
                finally
                {
                    positionsGate.exit();
                }
            }
        };
    }
}
