package io.sluice.broker.backfill;

/**
 * Tuning of backfill runners.
 *
 * @param batchRecords          records read and exported per batch; a pause waits for at most one batch.
 * @param checkpointEveryRecords a checkpoint is replicated after this many records ...
 * @param checkpointIntervalMs  ... or this long after the previous one, whichever comes first.
 * @param maxAttempts           attempts of a task (over every leader) before it ends FAILED.
 * @param initialBackoffMs      wait before the second attempt; doubled per further attempt ...
 * @param maxBackoffMs          ... up to this.
 * @param replicateTimeoutMs    deadline of one replicated entry.
 * @param maxConcurrentTasks    runner threads of one partition; more tasks wait their turn.
 */
public record BackfillRunnerConfig(
    int batchRecords,
    int checkpointEveryRecords,
    long checkpointIntervalMs,
    int maxAttempts,
    long initialBackoffMs,
    long maxBackoffMs,
    long replicateTimeoutMs,
    int maxConcurrentTasks)
{
    public BackfillRunnerConfig
    {
        requireAtLeast("batchRecords", batchRecords, 1);
        requireAtLeast("checkpointEveryRecords", checkpointEveryRecords, 1);
        requireAtLeast("checkpointIntervalMs", checkpointIntervalMs, 1);
        requireAtLeast("maxAttempts", maxAttempts, 1);
        requireAtLeast("initialBackoffMs", initialBackoffMs, 0);
        requireAtLeast("maxBackoffMs", maxBackoffMs, initialBackoffMs);
        requireAtLeast("replicateTimeoutMs", replicateTimeoutMs, 1);
        requireAtLeast("maxConcurrentTasks", maxConcurrentTasks, 1);
    }

    public static BackfillRunnerConfig defaults()
    {
        return new BackfillRunnerConfig(256, 10_000, 1_000, 5, 500, 30_000, 10_000, 8);
    }

    /** Wait before attempt {@code attempt + 1}, given {@code attempt} attempts made (at least 1). */
    public long backoffMs(final int attempt)
    {
        long backoffMs = initialBackoffMs;
        for (int i = 1; i < attempt && backoffMs < maxBackoffMs; i++)
        {
            backoffMs *= 2;
        }
        return Math.min(backoffMs, maxBackoffMs);
    }

    public BackfillRunnerConfig withMaxAttempts(final int maxAttempts)
    {
        return new BackfillRunnerConfig(batchRecords, checkpointEveryRecords, checkpointIntervalMs, maxAttempts,
            initialBackoffMs, maxBackoffMs, replicateTimeoutMs, maxConcurrentTasks);
    }

    public BackfillRunnerConfig withBackoff(final long initialBackoffMs, final long maxBackoffMs)
    {
        return new BackfillRunnerConfig(batchRecords, checkpointEveryRecords, checkpointIntervalMs, maxAttempts,
            initialBackoffMs, maxBackoffMs, replicateTimeoutMs, maxConcurrentTasks);
    }

    public BackfillRunnerConfig withCheckpoints(final int everyRecords, final long intervalMs)
    {
        return new BackfillRunnerConfig(batchRecords, everyRecords, intervalMs, maxAttempts,
            initialBackoffMs, maxBackoffMs, replicateTimeoutMs, maxConcurrentTasks);
    }

    public BackfillRunnerConfig withBatchRecords(final int batchRecords)
    {
        return new BackfillRunnerConfig(batchRecords, checkpointEveryRecords, checkpointIntervalMs, maxAttempts,
            initialBackoffMs, maxBackoffMs, replicateTimeoutMs, maxConcurrentTasks);
    }

    public BackfillRunnerConfig withMaxConcurrentTasks(final int maxConcurrentTasks)
    {
        return new BackfillRunnerConfig(batchRecords, checkpointEveryRecords, checkpointIntervalMs, maxAttempts,
            initialBackoffMs, maxBackoffMs, replicateTimeoutMs, maxConcurrentTasks);
    }

    private static void requireAtLeast(final String name, final long value, final long min)
    {
        if (value < min)
        {
            throw new IllegalArgumentException(name + " must be at least " + min + ", was " + value);
        }
    }
}
