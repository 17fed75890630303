package io.sluice.broker.raft;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * Futures that complete once a state machine has applied a Raft index: what a proposer waits for before it answers
 * from the local replica. Thread-safe (guarded by the waiters' map).
 */
public final class AppliedIndexWaiters
{
    private final LongSupplier lastAppliedIndex;
    private final TreeMap<Long, List<CompletableFuture<Void>>> waiters = new TreeMap<>();

    /** @param lastAppliedIndex the state machine's last applied index, read under this object's guard. */
    public AppliedIndexWaiters(final LongSupplier lastAppliedIndex)
    {
        this.lastAppliedIndex = lastAppliedIndex;
    }

    /** Completes once the entry at {@code index} is applied (at once if it is). */
    public CompletableFuture<Void> await(final long index)
    {
        final CompletableFuture<Void> applied = new CompletableFuture<>();
        synchronized (waiters)
        {
            if (lastAppliedIndex.getAsLong() >= index)
            {
                return CompletableFuture.completedFuture(null);
            }
            waiters.computeIfAbsent(index, (i) -> new ArrayList<>(1)).add(applied);
        }
        // A waiter its caller gave up on (orTimeout, cancel) is dropped: an index far ahead must not hold it for ever.
        applied.whenComplete((ignored, failure) ->
        {
            if (failure != null)
            {
                drop(index, applied);
            }
        });
        return applied;
    }

    private void drop(final long index, final CompletableFuture<Void> waiter)
    {
        synchronized (waiters)
        {
            final List<CompletableFuture<Void>> atIndex = waiters.get(index);
            if (atIndex != null && atIndex.remove(waiter) && atIndex.isEmpty())
            {
                waiters.remove(index);
            }
        }
    }

    /** The state machine applied everything up to {@code index}: completes the waiters of those indexes. */
    public void applied(final long index)
    {
        List<CompletableFuture<Void>> ready = null;
        synchronized (waiters)
        {
            final Iterator<Map.Entry<Long, List<CompletableFuture<Void>>>> it =
                waiters.headMap(index, true).entrySet().iterator();
            while (it.hasNext())
            {
                if (ready == null)
                {
                    ready = new ArrayList<>();
                }
                ready.addAll(it.next().getValue());
                it.remove();
            }
        }
        if (ready != null)
        {
            ready.forEach((f) -> f.complete(null));
        }
    }
}
