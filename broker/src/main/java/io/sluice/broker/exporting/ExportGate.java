package io.sluice.broker.exporting;

import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The partition's export gate: every export (the director's records and flushes, the backfill runners' batches) runs
 * inside it, after checking the exporting state inside it. A pause is answered only once the gate has been passed
 * after the pause was applied ({@link #awaitPassed}): whatever export was inside then has ended, and every later one
 * sees the pause, so nothing is exported after the answer.
 * <p>
 * Waiting to pass never blocks a thread: a caller that finds the gate taken is completed by the thread leaving it.
 * Thread-safe.
 */
public final class ExportGate
{
    private static final CompletableFuture<Void> PASSED = CompletableFuture.completedFuture(null);

    private final ReentrantLock lock = new ReentrantLock();
    private final Queue<CompletableFuture<Void>> passWaiters = new ConcurrentLinkedQueue<>();

    public void enter()
    {
        lock.lock();
    }

    public void exit()
    {
        lock.unlock();
        if (!passWaiters.isEmpty())
        {
            passIfFree();
        }
    }

    /**
     * Completes once nobody who entered before this call is inside: at once when the gate is free, else when the
     * exporter inside leaves.
     */
    public CompletableFuture<Void> awaitPassed()
    {
        if (lock.tryLock())
        {
            lock.unlock();
            return PASSED;
        }
        final CompletableFuture<Void> passed = new CompletableFuture<>();
        passWaiters.add(passed);
        // The holder may have left between the tryLock and the add, seeing no waiter: look again.
        passIfFree();
        return passed;
    }

    private void passIfFree()
    {
        if (!lock.tryLock())
        {
            return; // the holder completes the waiters when it leaves
        }
        lock.unlock();
        CompletableFuture<Void> waiter;
        while ((waiter = passWaiters.poll()) != null)
        {
            waiter.complete(null);
        }
    }
}
