package io.sluice.protocol.concurrent;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;

/**
 * The JDK's common pool on small hosts. With 2 CPUs (a container limited to 2 cores included) its parallelism is 1,
 * and then {@link CompletableFuture} runs every {@code *Async} step given no executor, and every task of its delayed
 * executors, on a thread of its own, started for that task: Ratis's follower appends (one such step each) made a
 * 3-broker JVM start ~370 threads a second under load, and the records/s of {@code bash qa/bench.sh http} rose by a
 * third once the pool had two threads. The choice is made once, when {@link CompletableFuture} is first loaded, so
 * {@link #raiseParallelismIfSingle} must run first thing in {@code main}.
 */
public final class CommonPool
{
    public static final String PARALLELISM_PROPERTY = "java.util.concurrent.ForkJoinPool.common.parallelism";
    /** The parallelism from which {@link CompletableFuture} uses the common pool instead of a thread per task. */
    public static final int MIN_SHARED_PARALLELISM = 2;

    private CommonPool()
    {
    }

    /**
     * Sets the common pool's parallelism to {@value #MIN_SHARED_PARALLELISM} when it would be lower and nobody chose
     * it ({@code -D} of {@value #PARALLELISM_PROPERTY} wins); takes effect only before the pool and
     * {@link CompletableFuture} are first used.
     */
    public static void raiseParallelismIfSingle()
    {
        if (System.getProperty(PARALLELISM_PROPERTY) == null &&
            Runtime.getRuntime().availableProcessors() - 1 < MIN_SHARED_PARALLELISM)
        {
            System.setProperty(PARALLELISM_PROPERTY, Integer.toString(MIN_SHARED_PARALLELISM));
        }
    }

    /** Whether {@link CompletableFuture}'s default async executor starts a thread per task in this JVM. */
    public static boolean startsThreadPerTask()
    {
        return ForkJoinPool.getCommonPoolParallelism() < MIN_SHARED_PARALLELISM;
    }

    /** The line a process logs once when {@link #startsThreadPerTask}: what it costs and how to avoid it. */
    public static String threadPerTaskWarning()
    {
        return "the JVM's common pool has parallelism " + ForkJoinPool.getCommonPoolParallelism() + " (" +
            Runtime.getRuntime().availableProcessors() + " CPUs), so every asynchronous step of Ratis and of the " +
            "futures' deadlines starts a thread: start this JVM with -D" + PARALLELISM_PROPERTY + "=" +
            MIN_SHARED_PARALLELISM + " (sluice.jar sets it itself)";
    }
}
