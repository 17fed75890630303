package io.sluice.broker.append;

import io.sluice.broker.log.codecs.AppendBatchesResultDecoder;
import io.sluice.broker.log.codecs.AppendOutcome;
import org.agrona.DirectBuffer;

import java.nio.ByteOrder;

/**
 * What an applied append entry answered, per client batch in the entry's order: the first position and count of
 * the batch's records, and whether they were appended now, are a remembered duplicate, or conflict with the id's
 * first request. A read-only view over the reply's bytes; only {@link AppendReplies} creates one, so the reply
 * layout keeps one owner.
 * <p>
 * The reply of a plain {@code AppendEntry} reads as one APPENDED batch covering every record of the entry.
 * Immutable once made (the bytes are the reply's own); safe to read from any thread.
 */
public final class AppendOutcomes
{
    private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    /** An {@code AppendBatchesResult}'s batches group, or null for a plain entry's single batch. */
    private final DirectBuffer batches;
    private final int firstBatchOffset;
    private final int batchBlockLength;
    private final int batchCount;
    private final long plainFirstPosition;
    private final int plainCount;

    private AppendOutcomes(
        final DirectBuffer batches,
        final int firstBatchOffset,
        final int batchBlockLength,
        final int batchCount,
        final long plainFirstPosition,
        final int plainCount)
    {
        this.batches = batches;
        this.firstBatchOffset = firstBatchOffset;
        this.batchBlockLength = batchBlockLength;
        this.batchCount = batchCount;
        this.plainFirstPosition = plainFirstPosition;
        this.plainCount = plainCount;
    }

    /** A plain entry's answer: its {@code count} records were appended from {@code firstPosition} on. */
    static AppendOutcomes appended(final long firstPosition, final int count)
    {
        return new AppendOutcomes(null, 0, 0, 1, firstPosition, count);
    }

    /**
     * A view over an {@code AppendBatchesResult}'s batches: {@code batchCount} blocks of {@code blockLength} bytes
     * (the acting one: a newer writer may have added fields) from {@code firstBatchOffset}, which the caller
     * checked lie within {@code buffer}.
     */
    static AppendOutcomes batches(
        final DirectBuffer buffer, final int firstBatchOffset, final int blockLength, final int batchCount)
    {
        return new AppendOutcomes(buffer, firstBatchOffset, blockLength, batchCount, 0, 0);
    }

    public int batchCount()
    {
        return batchCount;
    }

    /** First position of the batch's records; -1 for a CONFLICT. */
    public long firstPosition(final int batch)
    {
        final int offset = batchOffset(batch);
        return batches == null ? plainFirstPosition :
            batches.getLong(offset + AppendBatchesResultDecoder.BatchesDecoder.firstPositionEncodingOffset(), ORDER);
    }

    /** How many records the batch's positions cover (0 for a CONFLICT). */
    public int recordCount(final int batch)
    {
        final int offset = batchOffset(batch);
        return batches == null ? plainCount :
            batches.getInt(offset + AppendBatchesResultDecoder.BatchesDecoder.recordCountEncodingOffset(), ORDER);
    }

    public AppendOutcome outcome(final int batch)
    {
        final int offset = batchOffset(batch);
        return batches == null ? AppendOutcome.APPENDED : AppendOutcome.get(
            (short)(batches.getByte(offset + AppendBatchesResultDecoder.BatchesDecoder.outcomeEncodingOffset()) & 0xFF));
    }

    private int batchOffset(final int batch)
    {
        if (batch < 0 || batch >= batchCount)
        {
            throw new IndexOutOfBoundsException("batch " + batch + " of " + batchCount);
        }
        return firstBatchOffset + batch * batchBlockLength;
    }

    @Override
    public String toString()
    {
        final StringBuilder text = new StringBuilder("AppendOutcomes[");
        for (int i = 0; i < batchCount; i++)
        {
            text.append(i == 0 ? "" : ", ").append(firstPosition(i)).append('+').append(recordCount(i)).append(' ')
                .append(outcome(i));
        }
        return text.append(']').toString();
    }
}
