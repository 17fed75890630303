package io.sluice.broker.backfill;

import io.sluice.broker.exporter.CommittedRecordBatch;
import io.sluice.broker.log.RecordLog;

import java.util.function.Supplier;

/**
 * Reads a backfill's records from the partition's {@link RecordLog}. The log is looked up on every read, as
 * the state machine replaces it when it installs a snapshot. Records are copied out under the log's lock and
 * handed to the consumer after it, so a slow sink never holds up appends. Thread-safe: each thread reads into
 * its own batch.
 */
public final class RecordLogBackfillSource implements BackfillRecordSource
{
    private final Supplier<RecordLog> log;
    private final ThreadLocal<CommittedRecordBatch> batches;

    public RecordLogBackfillSource(final int partitionId, final Supplier<RecordLog> log)
    {
        this.log = log;
        this.batches = ThreadLocal.withInitial(() -> new CommittedRecordBatch(partitionId));
    }

    @Override
    public int read(final long fromPosition, final long toPosition, final int maxRecords,
        final BackfillRecordConsumer consumer) throws Exception
    {
        if (toPosition < fromPosition || maxRecords <= 0)
        {
            return 0;
        }
        final int count = (int)Math.min(maxRecords, toPosition - fromPosition + 1);
        final CommittedRecordBatch batch = batches.get();
        batch.clear();
        final int read = log.get().read(fromPosition, count, batch);
        for (int i = 0; i < read; i++)
        {
            consumer.onRecord(batch.select(i)); // a failure ends the read: the records after it are not handed on
        }
        return read;
    }

    @Override
    public long firstHeldPosition()
    {
        return log.get().firstPosition();
    }
}
