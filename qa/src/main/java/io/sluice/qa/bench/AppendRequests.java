package io.sluice.qa.bench;

import io.sluice.protocol.codecs.AppendRequestEncoder;
import io.sluice.protocol.codecs.AppendResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.message.AppendLimits;
import io.sluice.protocol.transport.MessageWriter;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;

import java.util.function.IntFunction;

/**
 * The append requests benchmarks send straight to a broker's command API, each encoded once into a writer that
 * can be sent again, and their answers told apart.
 */
final class AppendRequests
{
    private AppendRequests()
    {
    }

    /**
     * One request of {@code count} records to {@code partitionId}, each stamped with the time it is encoded: record
     * {@code i} has {@code key.apply(i)} and {@code payload.apply(i)}, whose bytes together are at most
     * {@code maxRecordBytes} (what sizes the buffer once). The writer may be sent any number of times.
     */
    static MessageWriter encode(
        final int partitionId, final int count, final int maxRecordBytes, final IntFunction<String> key,
        final IntFunction<byte[]> payload)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(MessageHeaderEncoder.ENCODED_LENGTH +
            AppendRequestEncoder.BLOCK_LENGTH + AppendRequestEncoder.RecordsEncoder.sbeHeaderSize() +
            (int)(count * AppendLimits.recordBytes(0, maxRecordBytes)));
        final AppendRequestEncoder encoder = new AppendRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .partitionId(partitionId);
        final AppendRequestEncoder.RecordsEncoder records = encoder.recordsCount(count);
        for (int i = 0; i < count; i++)
        {
            final byte[] bytes = payload.apply(i);
            records.next().timestamp(System.currentTimeMillis()).key(key.apply(i)).putPayload(bytes, 0, bytes.length);
        }
        return MessageWriter.of(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    /** Whether a broker's answer to an append request is an {@code AppendResponse} (not an error). */
    static boolean isAppended(final DirectBuffer response)
    {
        return new MessageHeaderDecoder().wrap(response, 0).templateId() == AppendResponseDecoder.TEMPLATE_ID;
    }
}
