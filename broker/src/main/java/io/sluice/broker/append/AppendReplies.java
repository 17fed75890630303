package io.sluice.broker.append;

import io.sluice.broker.log.codecs.AppendBatchesResultDecoder;
import io.sluice.broker.log.codecs.AppendBatchesResultEncoder;
import io.sluice.broker.log.codecs.AppendOutcome;
import io.sluice.broker.log.codecs.AppendResultDecoder;
import io.sluice.broker.log.codecs.AppendResultEncoder;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The replies of applied append entries, as the proposer receives them: an {@code AppendResult} for an
 * {@code AppendEntry}, an {@code AppendBatchesResult} for an {@code IdempotentAppendEntry}. The one owner of their
 * layout: the state machine writes them here, and the proposer reads them only as {@link AppendOutcomes}.
 */
public final class AppendReplies
{
    /** The reply of an entry that answers nothing. */
    public static final byte[] NO_REPLY = new byte[0];

    private AppendReplies()
    {
    }

    static byte[] appendResult(final long firstPosition, final int count)
    {
        final byte[] bytes = new byte[MessageHeaderEncoder.ENCODED_LENGTH + AppendResultEncoder.BLOCK_LENGTH];
        new AppendResultEncoder()
            .wrapAndApplyHeader(new UnsafeBuffer(bytes), 0, new MessageHeaderEncoder())
            .firstPosition(firstPosition)
            .count(count);
        return bytes;
    }

    /**
     * Writes one {@code AppendBatchesResult}, batch by batch in the entry's order. One per state (the apply thread);
     * each {@link #start} begins a new reply in fresh bytes, which Ratis then owns.
     */
    public static final class BatchesReply
    {
        private final MessageHeaderEncoder header = new MessageHeaderEncoder();
        private final AppendBatchesResultEncoder encoder = new AppendBatchesResultEncoder();
        private final UnsafeBuffer buffer = new UnsafeBuffer(0, 0);
        private AppendBatchesResultEncoder.BatchesEncoder batches;

        void start(final int batchCount)
        {
            buffer.wrap(new byte[MessageHeaderEncoder.ENCODED_LENGTH + AppendBatchesResultEncoder.BLOCK_LENGTH +
                AppendBatchesResultEncoder.BatchesEncoder.sbeHeaderSize() +
                batchCount * AppendBatchesResultEncoder.BatchesEncoder.sbeBlockLength()]);
            batches = encoder.wrapAndApplyHeader(buffer, 0, header).batchesCount(batchCount);
        }

        /** The next batch's answer; CONFLICT carries first position -1 and count 0. */
        void add(final long firstPosition, final int recordCount, final AppendOutcome outcome)
        {
            batches.next().firstPosition(firstPosition).recordCount(recordCount).outcome(outcome);
        }

        /** The reply, once every batch was added. */
        byte[] bytes()
        {
            return buffer.byteArray();
        }
    }

    /**
     * Decodes an append entry's reply ({@code AppendResult} or {@code AppendBatchesResult}) into a view over
     * {@code bytes}, which must not change afterwards; null when the reply is none of them or is cut short.
     */
    public static AppendOutcomes decode(final byte[] bytes)
    {
        if (bytes.length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            return null;
        }
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
        if (header.schemaId() != MessageHeaderDecoder.SCHEMA_ID)
        {
            return null;
        }
        final int blockEnd = header.encodedLength() + header.blockLength();
        if (header.templateId() == AppendBatchesResultDecoder.TEMPLATE_ID)
        {
            if (blockEnd + AppendBatchesResultDecoder.BatchesDecoder.sbeHeaderSize() > bytes.length)
            {
                return null;
            }
            final AppendBatchesResultDecoder decoder = new AppendBatchesResultDecoder()
                .wrap(buffer, header.encodedLength(), header.blockLength(), header.version());
            final AppendBatchesResultDecoder.BatchesDecoder batches = decoder.batches();
            final int firstBatchOffset = decoder.limit();
            final int blockLength = batches.actingBlockLength();
            if (blockLength < AppendBatchesResultDecoder.BatchesDecoder.sbeBlockLength() ||
                firstBatchOffset + (long)batches.count() * blockLength > bytes.length)
            {
                return null;
            }
            return AppendOutcomes.batches(buffer, firstBatchOffset, blockLength, batches.count());
        }
        if (header.templateId() != AppendResultDecoder.TEMPLATE_ID || blockEnd > bytes.length ||
            header.blockLength() < AppendResultDecoder.BLOCK_LENGTH)
        {
            return null;
        }
        final AppendResultDecoder decoder = new AppendResultDecoder()
            .wrap(buffer, header.encodedLength(), header.blockLength(), header.version());
        return AppendOutcomes.appended(decoder.firstPosition(), decoder.count());
    }
}
