package io.sluice.broker.exporter;

import io.sluice.broker.log.RecordLog;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.collections.IntArrayList;
import org.agrona.collections.LongArrayList;

/**
 * Records copied out of the {@link RecordLog} by one read, then viewed one at a time: the log's lock is held only
 * while copying, never while a sink takes a record. Reusable: {@link #clear} before each read. Not thread-safe.
 */
public final class CommittedRecordBatch implements RecordLog.RecordReader
{
    private final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64 * 1024);
    private final LongArrayList positions = new LongArrayList();
    private final LongArrayList timestamps = new LongArrayList();
    private final IntArrayList keyOffsets = new IntArrayList();
    private final IntArrayList keyLengths = new IntArrayList();
    private final IntArrayList payloadOffsets = new IntArrayList();
    private final IntArrayList payloadLengths = new IntArrayList();
    private final CommittedRecordView view;
    private int limit;

    public CommittedRecordBatch(final int partitionId)
    {
        this.view = new CommittedRecordView(partitionId);
    }

    public void clear()
    {
        positions.clear();
        timestamps.clear();
        keyOffsets.clear();
        keyLengths.clear();
        payloadOffsets.clear();
        payloadLengths.clear();
        limit = 0;
    }

    @Override
    public void onRecord(
        final long position,
        final long timestamp,
        final DirectBuffer source,
        final int keyOffset,
        final int keyLength,
        final int payloadOffset,
        final int payloadLength)
    {
        positions.addLong(position);
        timestamps.addLong(timestamp);
        keyLengths.addInt(keyLength);
        keyOffsets.addInt(limit);
        if (keyLength > 0)
        {
            buffer.putBytes(limit, source, keyOffset, keyLength);
            limit += keyLength;
        }
        payloadOffsets.addInt(limit);
        payloadLengths.addInt(payloadLength);
        buffer.putBytes(limit, source, payloadOffset, payloadLength);
        limit += payloadLength;
    }

    /** How many records the batch holds. */
    public int size()
    {
        return positions.size();
    }

    /** The index-th record of the batch, in the one reusable view: valid until the next select or clear. */
    public CommittedRecordView select(final int index)
    {
        return view.wrap(positions.getLong(index), timestamps.getLong(index), buffer, keyOffsets.getInt(index),
            keyLengths.getInt(index), payloadOffsets.getInt(index), payloadLengths.getInt(index));
    }
}
