package io.sluice.broker.backfill;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The partition's exporting state as backfill runners see it. A runner exports a batch only between a
 * successful {@link #tryEnter} and {@link #exit}; in a broker that is the partition's export gate
 * ({@code partition.ExportingView#backfillSwitch}), which a pause's answer passes, so once a pause is answered no
 * backfill record is exported until exporting resumes.
 */
public interface ExportingSwitch
{
    /** True when exporting is allowed now; then the caller is inside and must call {@link #exit}. */
    boolean tryEnter();

    void exit();

    /** True while acknowledgements are withheld (soft pause or pause): runners keep their checkpoints back. */
    boolean withholdsCheckpoints();

    /**
     * Replicates a checkpoint unless acknowledgements are withheld, deciding and starting it at one point a (soft)
     * pause's answer passes and then waits for what was started there, so no checkpoint lands after that answer.
     *
     * @return the replication, or null when withheld (nothing was started).
     */
    CompletableFuture<?> publishCheckpoint(Supplier<CompletableFuture<?>> replicate);
}
