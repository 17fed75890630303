package io.sluice.broker.backfill;

import io.sluice.protocol.codecs.ExportingState;

import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;

/**
 * The partition's exporting state as backfill runners see it. A runner exports a batch only between a
 * successful {@link #tryEnter} and {@link #exit}; in a broker that is {@link #underLock}, over the state
 * machine's export gate, under which a pause is applied, so once a pause is applied no backfill record is
 * exported until exporting resumes.
 */
public interface ExportingSwitch
{
    /** True when exporting is allowed now; then the caller is inside and must call {@link #exit}. */
    boolean tryEnter();

    void exit();

    /** True while acknowledgements are withheld (soft pause or pause): runners keep their checkpoints back. */
    boolean withholdsCheckpoints();

    /**
     * The gate of a partition state machine that applies exporting state changes while holding
     * {@code lock}: a batch is exported holding the lock after seeing a state other than PAUSED.
     */
    static ExportingSwitch underLock(final Lock lock, final Supplier<ExportingState> state)
    {
        return new ExportingSwitch()
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
