package io.sluice.broker.backfill;

import io.sluice.broker.exporter.CommittedRecordView;
import io.sluice.broker.log.RecordLog;
import org.agrona.DirectBuffer;

import java.util.function.Supplier;

/**
 * Reads a backfill's records from the partition's {@link RecordLog}. The log is looked up on every read, as
 * the state machine replaces it when it installs a snapshot. Thread-safe: each read has its own record view.
 */
public final class RecordLogBackfillSource implements BackfillRecordSource
{
    private final int partitionId;
    private final Supplier<RecordLog> log;

    public RecordLogBackfillSource(final int partitionId, final Supplier<RecordLog> log)
    {
        this.partitionId = partitionId;
        this.log = log;
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
        final View view = new View(partitionId, consumer);
        final int read = log.get().read(fromPosition, count, view);
        if (view.failure != null)
        {
            throw view.failure; // the records after the failed one were not handed on
        }
        return read;
    }

    /** Hands records to the consumer until it fails once; RecordLog's reader cannot throw or stop early. */
    private static final class View implements RecordLog.RecordReader
    {
        private final CommittedRecordView record;
        private final BackfillRecordConsumer consumer;
        private Exception failure;

        View(final int partitionId, final BackfillRecordConsumer consumer)
        {
            this.record = new CommittedRecordView(partitionId);
            this.consumer = consumer;
        }

        @Override
        public void onRecord(final long position, final long timestamp, final DirectBuffer buffer,
            final int keyOffset, final int keyLength, final int payloadOffset, final int payloadLength)
        {
            if (failure != null)
            {
                return;
            }
            try
            {
                consumer.onRecord(record.wrap(position, timestamp, buffer, keyOffset, keyLength, payloadOffset, payloadLength));
            }
            catch (final Exception e)
            {
                failure = e;
            }
        }
    }
}
