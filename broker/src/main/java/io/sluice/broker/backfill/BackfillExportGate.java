package io.sluice.broker.backfill;

import io.sluice.protocol.codecs.ExportingState;

import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;

/**
 * The partition's exporting switch as backfill runners see it. A runner exports a batch only between a
 * successful {@link #tryEnter} and {@link #exit}; the state machine applies a pause under the same gate, so
 * once a pause is applied no backfill record is exported until exporting resumes.
 */
public interface BackfillExportGate
{
    /** True when exporting is allowed now; then the caller holds the gate and must call {@link #exit}. */
    boolean tryEnter();

    void exit();

    /** True while acknowledgements are withheld (soft pause or pause): runners keep their checkpoints back. */
    boolean withholdsCheckpoints();

    /**
     * The gate of a partition state machine that applies exporting state changes while holding
     * {@code lock}: a batch is exported holding the lock after seeing a state other than PAUSED.
     */
    static BackfillExportGate underLock(final Lock lock, final Supplier<ExportingState> state)
    {
        return new BackfillExportGate()
        {
            public boolean tryEnter()
            {
                lock.lock();
                if (state.get() == ExportingState.PAUSED)
                {
                    lock.unlock();
                    return false;
                }
                return true;
            }

            public void exit()
            {
                lock.unlock();
            }

            public boolean withholdsCheckpoints()
            {
                return state.get() != ExportingState.EXPORTING;
            }
        };
    }
}
