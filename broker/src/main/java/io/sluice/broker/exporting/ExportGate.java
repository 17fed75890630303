package io.sluice.broker.exporting;

import java.util.ArrayList;
import java.util.List;
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

    /**
     * Completes the waiters if nobody is inside. They are taken from the queue while holding the lock: a waiter queued
     * while someone was inside is then known to have seen that one leave. Taken after letting go of the lock, a waiter
     * queued in between, while a newcomer who entered meanwhile is inside, would be let through too early.
     */
    private void passIfFree()
    {
        while (!passWaiters.isEmpty() && lock.tryLock())
        {
            final List<CompletableFuture<Void>> passed = new ArrayList<>();
            try
            {
                CompletableFuture<Void> waiter;
                while ((waiter = passWaiters.poll()) != null)
                {
                    passed.add(waiter);
                }
            }
            finally
            {
                lock.unlock();
            }
            // Completed outside the lock (their continuations may run here); one queued meanwhile is taken next round.
            passed.forEach((waiter) -> waiter.complete(null));
        }
    }
}
