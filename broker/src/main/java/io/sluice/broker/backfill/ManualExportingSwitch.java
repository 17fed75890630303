package io.sluice.broker.backfill;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * An {@link ExportingSwitch} flipped by hand, with no state machine behind it: for tests and the backfill
 * benchmark. A runner exports a batch only between {@link #tryEnter} and {@link #exit}; {@link #pause} refuses
 * new batches and waits for batches in flight to end, so once it returns true no backfill record is exported
 * until {@link #resume}. A soft pause keeps exporting but withholds checkpoints, so nothing a task has
 * not acknowledged is given up.
 * <p>
 * Thread-safe.
 */
public final class ManualExportingSwitch implements ExportingSwitch
{
    private int entered;
    private boolean paused;
    private boolean softPaused;

    @Override
    public synchronized boolean tryEnter()
    {
        if (paused)
        {
            return false;
        }
        entered++;
        return true;
    }

    @Override
    public synchronized void exit()
    {
        if (entered <= 0)
        {
            throw new IllegalStateException("exit without enter");
        }
        if (--entered == 0)
        {
            notifyAll();
        }
    }

    /**
     * Closes the gate and waits up to the timeout for batches in flight to finish.
     *
     * @return true when no batch is in flight any more (the pause holds from now on).
     */
    public synchronized boolean pause(final long timeout, final TimeUnit unit) throws InterruptedException
    {
        paused = true;
        softPaused = false;
        final long deadlineNs = System.nanoTime() + unit.toNanos(timeout);
        while (entered > 0)
        {
            final long leftNs = deadlineNs - System.nanoTime();
            if (leftNs <= 0)
            {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, leftNs);
        }
        return true;
    }

    public synchronized void softPause()
    {
        paused = false;
        softPaused = true;
        notifyAll();
    }

    public synchronized void resume()
    {
        paused = false;
        softPaused = false;
        notifyAll();
    }

    public synchronized boolean isPaused()
    {
        return paused;
    }

    @Override
    public synchronized boolean withholdsCheckpoints()
    {
        return paused || softPaused;
    }

    @Override
    public synchronized CompletableFuture<?> publishCheckpoint(final Supplier<CompletableFuture<?>> replicate)
    {
        return withholdsCheckpoints() ? null : replicate.get();
    }
}
