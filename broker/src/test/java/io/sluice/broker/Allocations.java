package io.sluice.broker;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What a piece of work allocates, heap and direct memory, measured on a thread of its own so nothing else the JVM
 * does is counted on the heap side. For tests that a large record goes through no buffer of ours: a copy of it
 * into a heap array or a direct buffer (ours, or the JDK's for a heap buffer written to a channel) shows as at least
 * its size.
 */
public final class Allocations
{
    private Allocations()
    {
    }

    /** Work that may throw. */
    @FunctionalInterface
    public interface Work
    {
        void run() throws Exception;
    }

    /** Bytes {@code work} allocated on the heap (its thread's) and in direct buffers (the whole JVM's). */
    public record Allocated(long heapBytes, long directBytes)
    {
    }

    public static Allocated of(final Work work) throws Exception
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final AtomicReference<Allocated> allocated = new AtomicReference<>();
        final AtomicReference<Exception> failure = new AtomicReference<>();
        final Thread thread = new Thread(() ->
        {
            try
            {
                final long directBefore = directBytes();
                final long heapBefore = threads.getCurrentThreadAllocatedBytes();
                work.run();
                final long heap = threads.getCurrentThreadAllocatedBytes() - heapBefore;
                allocated.set(new Allocated(heap, directBytes() - directBefore));
            }
            catch (final Exception e)
            {
                failure.set(e);
            }
        }, "allocations");
        thread.start();
        thread.join();
        if (failure.get() != null)
        {
            throw failure.get();
        }
        return allocated.get();
    }

    private static long directBytes()
    {
        long used = 0;
        for (final BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class))
        {
            if ("direct".equals(pool.getName()))
            {
                used += pool.getMemoryUsed();
            }
        }
        return used;
    }
}
