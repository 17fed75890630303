package io.sluice.broker.append;

import io.sluice.broker.log.codecs.AppendBatchDecoder;
import io.sluice.broker.log.codecs.AppendBatchEncoder;
import io.sluice.broker.log.codecs.AppendEntryDecoder;
import io.sluice.broker.log.codecs.AppendEntryEncoder;
import io.sluice.broker.log.codecs.IdempotencyScope;
import io.sluice.broker.log.codecs.IdempotentAppendEntryDecoder;
import io.sluice.broker.log.codecs.IdempotentAppendEntryEncoder;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.broker.log.codecs.RecordBodyDecoder;
import io.sluice.broker.log.codecs.RecordBodyEncoder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The one owner of the append entries' layout ({@code AppendEntry}, {@code IdempotentAppendEntry}, {@code AppendBatch}
 * and {@code RecordBody} of broker-log-codecs.xml), written and read only through the generated codecs.
 * <p>
 * An entry is its header message followed by its batches, each an {@code AppendBatch} message (the batch's id, its
 * record count and records length) and its records, {@code RecordBody}s without headers, back to back. The command
 * API encodes a request's records once, into a batch's own array ({@link #newBatch}), the one copy a record takes
 * from the network frame to the log: an entry never copies a batch. The array keeps {@link #ENTRY_HEADER_ROOM}
 * bytes in front of the batch, where the entry's header is written when the batch is an entry's first, so an entry
 * of one batch is one view of that array, and an entry of several is a {@link ByteString} rope over the batches'
 * arrays ({@link #plainEntry}, {@link #idempotentEntry}). Every piece of such a rope is at least 64 bytes (a batch's
 * header alone is), so protobuf, which merges two adjacent pieces shorter than 128 bytes in all by copying them, keeps
 * every piece as it is.
 * <p>
 * The apply reads an entry through a {@link Reader} over the entry's {@link EntryBytes}, which may be the rope
 * itself (on the leader) or one buffer (a follower, a replay), and hands each record's body to the record log as
 * it stands in the entry.
 * <p>
 * The static methods are thread-safe; a {@link Reader} belongs to one thread.
 */
public final class AppendEntries
{
    static final int PLAIN_HEADER_LENGTH = MessageHeaderEncoder.ENCODED_LENGTH + AppendEntryEncoder.BLOCK_LENGTH;
    static final int IDEMPOTENT_HEADER_LENGTH =
        MessageHeaderEncoder.ENCODED_LENGTH + IdempotentAppendEntryEncoder.BLOCK_LENGTH;
    /** Bytes in front of a batch in its array: room for either entry's header. */
    static final int ENTRY_HEADER_ROOM = Math.max(PLAIN_HEADER_LENGTH, IDEMPOTENT_HEADER_LENGTH);
    /** A batch's header: its message header and block. */
    public static final int BATCH_HEADER_LENGTH = MessageHeaderEncoder.ENCODED_LENGTH + AppendBatchEncoder.BLOCK_LENGTH;
    /** Where a batch's first record starts in its array. */
    public static final int RECORDS_OFFSET = ENTRY_HEADER_ROOM + BATCH_HEADER_LENGTH;

    private AppendEntries()
    {
    }

    /** The encoded length of one record (a {@code RecordBody}) with a key and payload of these lengths. */
    public static long recordLength(final int keyLength, final int payloadLength)
    {
        return RecordBodyEncoder.BLOCK_LENGTH + RecordBodyEncoder.keyHeaderLength() + (long)keyLength +
            RecordBodyEncoder.payloadHeaderLength() + payloadLength;
    }

    /**
     * A new batch's array, its header written: {@code recordCount} records in {@code recordsLength} bytes (the sum
     * of their {@link #recordLength}s) under {@code id} (null: none). The caller encodes the records from
     * {@link #RECORDS_OFFSET} on, one after another, with a {@code RecordBodyEncoder} wrapped at each one's offset
     * (no message header), and hands the array over once filled: it is never written again but for the entry
     * header room.
     */
    public static byte[] newBatch(final int recordCount, final int recordsLength, final AppendBatcher.AppendId id)
    {
        final byte[] batch = new byte[RECORDS_OFFSET + recordsLength];
        final AppendBatchEncoder encoder = new AppendBatchEncoder()
            .wrapAndApplyHeader(new UnsafeBuffer(batch), ENTRY_HEADER_ROOM, new MessageHeaderEncoder())
            .recordCount(recordCount)
            .recordsLength(recordsLength)
            .recordBlockLength(RecordBodyEncoder.BLOCK_LENGTH);
        if (id == null)
        {
            encoder.scope(IdempotencyScope.NONE).idHigh(0).idLow(0).bodyDigest(0).windowMs(0);
        }
        else
        {
            encoder.scope(id.scope()).idHigh(id.high()).idLow(id.low()).bodyDigest(id.bodyDigest()).windowMs(id.windowMs());
        }
        return batch;
    }

    /** The bytes a batch takes in an entry: its header and records. */
    static int entryLength(final byte[] batch)
    {
        return batch.length - ENTRY_HEADER_ROOM;
    }

    /**
     * One {@code AppendEntry} of these batches (none with an id), in order: the first batch's array (its header
     * written into the room in front of it) when it is the only one, a rope over the batches' arrays otherwise. The
     * batches are not copied; their arrays must not change while the entry lives. Writes the first batch's room, so
     * each batch goes into one entry only, built by one thread (the batcher's submitting thread, which took the batch
     * from its queue under the batcher's monitor, after the command API filled it).
     */
    static ByteString plainEntry(final List<byte[]> batches)
    {
        final byte[] first = batches.get(0);
        final int start = ENTRY_HEADER_ROOM - PLAIN_HEADER_LENGTH;
        new AppendEntryEncoder()
            .wrapAndApplyHeader(new UnsafeBuffer(first), start, new MessageHeaderEncoder())
            .batchCount(batches.size());
        return rope(batches, start);
    }

    /** One {@code IdempotentAppendEntry} of these batches, stamped with the leader's clock; otherwise as {@link #plainEntry}. */
    static ByteString idempotentEntry(final long timestampMs, final List<byte[]> batches)
    {
        final byte[] first = batches.get(0);
        final int start = ENTRY_HEADER_ROOM - IDEMPOTENT_HEADER_LENGTH;
        new IdempotentAppendEntryEncoder()
            .wrapAndApplyHeader(new UnsafeBuffer(first), start, new MessageHeaderEncoder())
            .timestampMs(timestampMs)
            .batchCount(batches.size());
        return rope(batches, start);
    }

    private static ByteString rope(final List<byte[]> batches, final int firstStart)
    {
        final byte[] first = batches.get(0);
        final ByteString head = UnsafeByteOperations.unsafeWrap(first, firstStart, first.length - firstStart);
        if (batches.size() == 1)
        {
            return head;
        }
        final List<ByteString> pieces = new ArrayList<>(batches.size());
        pieces.add(head);
        for (int i = 1; i < batches.size(); i++)
        {
            final byte[] batch = batches.get(i);
            pieces.add(UnsafeByteOperations.unsafeWrap(batch, ENTRY_HEADER_ROOM, batch.length - ENTRY_HEADER_ROOM));
        }
        // A balanced rope of the pieces, in O(pieces): no piece is copied (each is at least 64 bytes).
        return ByteString.copyFrom(pieces);
    }

    /** The header of a batch made by {@link #newBatch}: its record count, id and scope. */
    static AppendBatchDecoder batchHeader(final byte[] batch)
    {
        return new AppendBatchDecoder().wrapAndApplyHeader(new UnsafeBuffer(batch), ENTRY_HEADER_ROOM,
            new MessageHeaderDecoder());
    }

    /**
     * Reads an append entry batch by batch and record by record, over its {@link EntryBytes}: a batch is read where
     * it lies in the entry (a view into its piece), so a record's body reaches the log from the entry's own bytes.
     * {@link #wrap} after dispatching on the entry's template, then {@link #nextBatch} for each of
     * {@link #batchCount} batches, and within one {@link #nextRecord} for each of its {@link #recordCount} records
     * (or none, to skip the batch). Not thread-safe: one per partition state, on the apply thread; the views are
     * valid until the next call.
     */
    public static final class Reader
    {
        private final MessageHeaderDecoder header = new MessageHeaderDecoder();
        private final AppendEntryDecoder plain = new AppendEntryDecoder();
        private final IdempotentAppendEntryDecoder idempotent = new IdempotentAppendEntryDecoder();
        private final AppendBatchDecoder batch = new AppendBatchDecoder();
        private final RecordBodyDecoder record = new RecordBodyDecoder();
        private final UnsafeBuffer headerView = new UnsafeBuffer(0, 0);
        private final UnsafeBuffer batchView = new UnsafeBuffer(0, 0);
        private final ExpandableArrayBuffer headerScratch = new ExpandableArrayBuffer(ENTRY_HEADER_ROOM + BATCH_HEADER_LENGTH);
        private final ExpandableArrayBuffer batchScratch = new ExpandableArrayBuffer(0);
        private EntryBytes bytes;
        private long timestampMs;
        private int batchCount;
        private int batchesRead;
        private int nextBatchOffset;
        private int recordsRead;
        private int recordCursor;
        private int recordsEnd;
        private int recordOffset;

        /**
         * Starts on an {@code AppendEntry} (plain) or {@code IdempotentAppendEntry} whose message header says
         * {@code templateId}, {@code blockLength} and {@code version}; returns its batch count.
         */
        int wrap(final EntryBytes bytes, final int templateId, final int blockLength, final int version)
            throws IOException
        {
            this.bytes = bytes;
            final int headerLength = MessageHeaderDecoder.ENCODED_LENGTH + blockLength;
            final DirectBuffer view = bytes.view(headerView, 0, headerLength, headerScratch);
            if (templateId == IdempotentAppendEntryDecoder.TEMPLATE_ID)
            {
                idempotent.wrap(view, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                timestampMs = idempotent.timestampMs();
                batchCount = idempotent.batchCount();
            }
            else
            {
                plain.wrap(view, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                timestampMs = 0;
                batchCount = plain.batchCount();
            }
            if (batchCount < 0)
            {
                throw new IOException("append entry of " + batchCount + " batches");
            }
            batchesRead = 0;
            nextBatchOffset = headerLength;
            return batchCount;
        }

        /** The idempotent entry's timestamp: the leader's clock at proposal. */
        long timestampMs()
        {
            return timestampMs;
        }

        int batchCount()
        {
            return batchCount;
        }

        /** Moves to the next batch: its header fields are readable, its records next. */
        void nextBatch() throws IOException
        {
            if (batchesRead == batchCount)
            {
                throw new IOException("append entry holds only " + batchCount + " batches");
            }
            final int start = nextBatchOffset;
            DirectBuffer view = bytes.view(headerView, start, MessageHeaderDecoder.ENCODED_LENGTH, headerScratch);
            header.wrap(view, 0);
            if (header.templateId() != AppendBatchDecoder.TEMPLATE_ID || header.schemaId() != AppendBatchDecoder.SCHEMA_ID)
            {
                throw new IOException("append entry batch " + batchesRead + " at offset " + start + " is template " +
                    header.templateId() + " of schema " + header.schemaId());
            }
            final int blockLength = header.blockLength();
            final int version = header.version();
            final int headerLength = MessageHeaderDecoder.ENCODED_LENGTH + blockLength;
            view = bytes.view(headerView, start, headerLength, headerScratch);
            final int recordsLength = batch.wrap(view, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version)
                .recordsLength();
            if (recordsLength < 0 || batch.recordCount() < 0)
            {
                throw new IOException("append entry batch " + batchesRead + " has " + batch.recordCount() +
                    " records in " + recordsLength + " bytes");
            }
            final DirectBuffer whole = bytes.view(batchView, start, headerLength + recordsLength, batchScratch);
            batch.wrap(whole, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
            batchesRead++;
            nextBatchOffset = start + headerLength + recordsLength;
            recordsRead = 0;
            recordCursor = headerLength;
            recordsEnd = headerLength + recordsLength;
        }

        int recordCount()
        {
            return batch.recordCount();
        }

        IdempotencyScope scope()
        {
            return batch.scope();
        }

        long idHigh()
        {
            return batch.idHigh();
        }

        long idLow()
        {
            return batch.idLow();
        }

        long bodyDigest()
        {
            return batch.bodyDigest();
        }

        long windowMs()
        {
            return batch.windowMs();
        }

        /** Moves to the batch's next record: its body is {@link #recordLength} bytes at {@link #recordOffset}. */
        void nextRecord() throws IOException
        {
            if (recordsRead == batch.recordCount())
            {
                throw new IOException("append entry batch " + (batchesRead - 1) + " holds only " +
                    batch.recordCount() + " records");
            }
            final int blockLength = batch.recordBlockLength();
            final int start = recordCursor;
            if (start + blockLength + RecordBodyDecoder.keyHeaderLength() > recordsEnd)
            {
                throw truncatedRecord();
            }
            record.wrap(batchView, start, blockLength, batch.actingVersion());
            if (record.keyLength() < 0 || record.limit() + RecordBodyDecoder.keyHeaderLength() + (long)record.keyLength() +
                RecordBodyDecoder.payloadHeaderLength() > recordsEnd)
            {
                throw truncatedRecord();
            }
            record.skipKey();
            if (record.payloadLength() < 0 ||
                record.limit() + RecordBodyDecoder.payloadHeaderLength() + (long)record.payloadLength() > recordsEnd)
            {
                throw truncatedRecord();
            }
            record.skipPayload();
            recordOffset = start;
            recordCursor = record.limit();
            recordsRead++;
        }

        /** The buffer holding the current record's body (and the rest of its batch). */
        DirectBuffer recordBuffer()
        {
            return batchView;
        }

        int recordOffset()
        {
            return recordOffset;
        }

        int recordLength()
        {
            return recordCursor - recordOffset;
        }

        /** The block length the records of the current batch were encoded with. */
        int recordBlockLength()
        {
            return batch.recordBlockLength();
        }

        /** The schema version the records of the current batch were encoded with. */
        int recordVersion()
        {
            return batch.actingVersion();
        }

        /** Lets go of the entry's bytes: a view must not outlive the apply of its entry. */
        void release()
        {
            headerView.wrap(0, 0);
            batchView.wrap(0, 0);
            bytes = null;
        }

        private IOException truncatedRecord()
        {
            return new IOException("append entry batch " + (batchesRead - 1) + ": record " + recordsRead +
                " runs past the batch's " + (recordsEnd - recordCursor) + " bytes left");
        }
    }
}
