package io.sluice.broker.backfill;

/**
 * Committed records of one partition, read by position: the broker's record log as a backfill sees it.
 * Must be safe to call from several runner threads at once (each with its own range).
 */
@FunctionalInterface
public interface BackfillRecordSource
{
    /**
     * Passes the committed records with positions in {@code [fromPosition, toPosition]} to the consumer in
     * position order, at most {@code maxRecords} of them.
     *
     * @return the number of records passed; 0 means no committed record at {@code fromPosition} is available
     * (not committed yet, or compacted away), which a runner treats as a failed attempt.
     */
    int read(long fromPosition, long toPosition, int maxRecords, BackfillRecordConsumer consumer) throws Exception;

    /**
     * The lowest position still held: a runner moves past a range compacted away (it can never be exported, and the
     * plan reported it) instead of failing on it. Every position by default.
     */
    default long firstHeldPosition()
    {
        return 1;
    }
}
