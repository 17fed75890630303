package io.sluice.broker.partition;

import io.sluice.broker.log.codecs.AppendEntryEncoder;
import io.sluice.broker.log.codecs.IdempotencyScope;
import io.sluice.broker.log.codecs.IdempotentAppendEntryEncoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The one owner of the append entries' layout ({@code AppendEntry} and {@code IdempotentAppendEntry} of
 * broker-log-codecs.xml), written only through the generated encoders. A request's records are encoded once, as
 * a whole {@code AppendEntry}: a <em>batch</em>. An entry of one plain batch is that batch as it is, with no
 * further copy; an entry of several copies their record elements, byte for byte, behind a header and a records
 * group header the generated encoders write (both entries' record elements have the same layout).
 * Stateless; the encoders are per call.
 */
public final class AppendEntries
{
    /** Where a batch's record elements start: after the message header, the root block and the group header. */
    public static final int BATCH_ELEMENTS_OFFSET = MessageHeaderEncoder.ENCODED_LENGTH +
        AppendEntryEncoder.BLOCK_LENGTH + AppendEntryEncoder.RecordsEncoder.sbeHeaderSize();
    /** An idempotent entry's fixed part: header, root block, and the two group headers. */
    static final int IDEMPOTENT_HEADER_LENGTH = MessageHeaderEncoder.ENCODED_LENGTH +
        IdempotentAppendEntryEncoder.BLOCK_LENGTH + IdempotentAppendEntryEncoder.BatchesEncoder.sbeHeaderSize() +
        IdempotentAppendEntryEncoder.RecordsEncoder.sbeHeaderSize();
    static final int IDEMPOTENT_BATCH_LENGTH = IdempotentAppendEntryEncoder.BatchesEncoder.sbeBlockLength();

    private AppendEntries()
    {
    }

    /** The encoded length of one record element with a key and payload of these lengths. */
    public static long recordLength(final int keyLength, final int payloadLength)
    {
        return AppendEntryEncoder.RecordsEncoder.sbeBlockLength() + AppendEntryEncoder.RecordsEncoder.keyHeaderLength() +
            (long)keyLength + AppendEntryEncoder.RecordsEncoder.payloadHeaderLength() + payloadLength;
    }

    /**
     * Starts a batch in {@code buffer} (of {@link #BATCH_ELEMENTS_OFFSET} plus the records' {@link #recordLength}s):
     * the caller gives the records' count ({@code recordsCount}) and fills each with {@code next()}; the encoder's
     * {@code limit()} is where the next byte goes.
     */
    public static AppendEntryEncoder startBatch(final MutableDirectBuffer buffer)
    {
        return new AppendEntryEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
    }

    /** How many bytes of record elements a batch holds. */
    static int elementsLength(final byte[] batch)
    {
        return batch.length - BATCH_ELEMENTS_OFFSET;
    }

    /** One entry of plain batches holding {@code records} records in all: the batch itself when there is one. */
    static byte[] plainEntry(final byte[][] batches, final int records)
    {
        if (batches.length == 1)
        {
            return batches[0];
        }
        int length = BATCH_ELEMENTS_OFFSET;
        for (final byte[] batch : batches)
        {
            length += elementsLength(batch);
        }
        final byte[] entry = new byte[length];
        final UnsafeBuffer buffer = new UnsafeBuffer(entry);
        startBatch(buffer).recordsCount(records);
        copyElements(buffer, BATCH_ELEMENTS_OFFSET, batches);
        return entry;
    }

    /** The part of an idempotent entry that describes one batch. */
    record BatchHeader(int recordCount, IdempotencyScope scope, long idHigh, long idLow,
        long bodyDigest, long windowMs)
    {
    }

    /** One idempotent entry: each batch's header in order, then all their records in the same order. */
    static byte[] idempotentEntry(final long timestampMs, final BatchHeader[] headers, final byte[][] batches,
        final int records)
    {
        int length = IDEMPOTENT_HEADER_LENGTH + headers.length * IDEMPOTENT_BATCH_LENGTH;
        for (final byte[] batch : batches)
        {
            length += elementsLength(batch);
        }
        final byte[] entry = new byte[length];
        final UnsafeBuffer buffer = new UnsafeBuffer(entry);
        final IdempotentAppendEntryEncoder encoder = new IdempotentAppendEntryEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .timestampMs(timestampMs);
        final IdempotentAppendEntryEncoder.BatchesEncoder encodedBatches = encoder.batchesCount(headers.length);
        for (final BatchHeader header : headers)
        {
            encodedBatches.next()
                .recordCount(header.recordCount())
                .scope(header.scope())
                .idHigh(header.idHigh())
                .idLow(header.idLow())
                .bodyDigest(header.bodyDigest())
                .windowMs(header.windowMs());
        }
        encoder.recordsCount(records);
        copyElements(buffer, encoder.limit(), batches);
        return entry;
    }

    private static void copyElements(final UnsafeBuffer buffer, final int offset, final byte[][] batches)
    {
        int cursor = offset;
        for (final byte[] batch : batches)
        {
            final int length = elementsLength(batch);
            buffer.putBytes(cursor, batch, BATCH_ELEMENTS_OFFSET, length);
            cursor += length;
        }
    }
}
