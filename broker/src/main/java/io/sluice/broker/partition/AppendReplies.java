package io.sluice.broker.partition;

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
 * {@code AppendEntry}, an {@code AppendBatchesResult} for an {@code IdempotentAppendEntry}.
 */
final class AppendReplies
{
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

    /** {@code outcomes} holds {firstPosition, recordCount, outcome} per batch. */
    static byte[] appendBatchesResult(final long[] outcomes, final int batchCount)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[MessageHeaderEncoder.ENCODED_LENGTH +
            AppendBatchesResultEncoder.BLOCK_LENGTH + AppendBatchesResultEncoder.BatchesEncoder.sbeHeaderSize() +
            batchCount * AppendBatchesResultEncoder.BatchesEncoder.sbeBlockLength()]);
        final AppendBatchesResultEncoder encoder = new AppendBatchesResultEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        final AppendBatchesResultEncoder.BatchesEncoder batches = encoder.batchesCount(batchCount);
        for (int i = 0; i < batchCount; i++)
        {
            batches.next()
                .firstPosition(outcomes[3 * i])
                .recordCount((int)outcomes[3 * i + 1])
                .outcome(AppendOutcome.get((short)outcomes[3 * i + 2]));
        }
        return buffer.byteArray();
    }

    /**
     * Decodes an append entry's reply: {firstPosition, count} for an {@code AppendEntry}, {firstPosition, count,
     * outcome} per batch for an {@code IdempotentAppendEntry}, or null when the reply carries none.
     */
    static long[] decode(final byte[] bytes)
    {
        if (bytes.length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            return null;
        }
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
        if (header.templateId() == AppendBatchesResultDecoder.TEMPLATE_ID)
        {
            final AppendBatchesResultDecoder decoder = new AppendBatchesResultDecoder()
                .wrap(buffer, header.encodedLength(), header.blockLength(), header.version());
            final AppendBatchesResultDecoder.BatchesDecoder batches = decoder.batches();
            final long[] outcomes = new long[3 * batches.count()];
            int i = 0;
            for (final AppendBatchesResultDecoder.BatchesDecoder batch : batches)
            {
                outcomes[i++] = batch.firstPosition();
                outcomes[i++] = batch.recordCount();
                outcomes[i++] = batch.outcomeRaw();
            }
            return outcomes;
        }
        if (bytes.length < MessageHeaderDecoder.ENCODED_LENGTH + AppendResultDecoder.BLOCK_LENGTH ||
            header.templateId() != AppendResultDecoder.TEMPLATE_ID)
        {
            return null;
        }
        final AppendResultDecoder decoder = new AppendResultDecoder()
            .wrap(buffer, header.encodedLength(), header.blockLength(), header.version());
        return new long[] {decoder.firstPosition(), decoder.count()};
    }
}
