package io.sluice.broker.exporting;

import io.sluice.protocol.cluster.ExportingHold;
import io.sluice.protocol.codecs.ExportingState;

/**
 * The exporting state of every partition as this broker's replica of the cluster control group holds it (issue 15:
 * the state is cluster-wide, not the partition's own). Implemented by the control group; any thread.
 */
public interface ExportingStates
{
    /** The state the replica holds for the partition (EXPORTING until an operation reached it). */
    ExportingState state(int partitionId);

    /** The version of that state; 0 before any operation. */
    long version(int partitionId);

    /**
     * Whether the replica has caught up with everything the control group committed before it started (or before a
     * snapshot replaced it): until then what it holds may be older than what was answered, so nothing is exported.
     */
    boolean caughtUp();

    /**
     * Whether a backup's hold on acknowledgements is in place (issue 26): exporters then acknowledge nothing, as in a
     * soft pause, whatever the partition's own state; a pause still pauses.
     */
    default boolean backupHeld()
    {
        return false;
    }

    /** The times of that state (when it began, its pause lease); none known by default. */
    default ExportingHold hold(final int partitionId)
    {
        return ExportingHold.NONE;
    }
}
