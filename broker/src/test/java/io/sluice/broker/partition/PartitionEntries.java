package io.sluice.broker.partition;

import io.sluice.broker.backfill.BackfillMessages;
import io.sluice.broker.backfill.BackfillEntry;
import io.sluice.broker.log.RecordLog;
import io.sluice.broker.log.codecs.AppendEntryEncoder;
import io.sluice.broker.log.codecs.ExporterPositionsEntryEncoder;
import io.sluice.broker.log.codecs.IdempotencyScope;
import io.sluice.broker.log.codecs.IdempotentAppendEntryEncoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Log entries as the broker proposes them, built with the generated encoders, for tests of the apply path. */
final class PartitionEntries
{
    private PartitionEntries()
    {
    }

    /** An {@code AppendEntry} of records whose keys and payloads are the given strings ("key=payload"). */
    static UnsafeBuffer append(final String... records)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        final AppendEntryEncoder encoder = new AppendEntryEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        final AppendEntryEncoder.RecordsEncoder encoded = encoder.recordsCount(records.length);
        long timestamp = 1_000;
        for (final String record : records)
        {
            final String[] keyAndPayload = record.split("=", 2);
            final byte[] payload = keyAndPayload[1].getBytes(StandardCharsets.UTF_8);
            encoded.next().timestamp(timestamp++).key(keyAndPayload[0]).putPayload(payload, 0, payload.length);
        }
        return copy(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    static UnsafeBuffer exporterPositions(final Map<String, Long> positions)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(128);
        final ExporterPositionsEntryEncoder encoder = new ExporterPositionsEntryEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        final ExporterPositionsEntryEncoder.ExportersEncoder exporters = encoder.exportersCount(positions.size());
        positions.forEach((id, position) -> exporters.next().position(position).exporterId(id));
        return copy(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    static UnsafeBuffer backfill(final BackfillEntry entry)
    {
        return new UnsafeBuffer(BackfillMessages.encode(entry));
    }

    /** One client batch of an {@code IdempotentAppendEntry}. */
    record Batch(IdempotencyScope scope, long idHigh, long idLow, long bodyDigest, long windowMs, String... records)
    {
        static Batch withoutId(final String... records)
        {
            return new Batch(IdempotencyScope.NONE, 0, 0, 0, 0, records);
        }
    }

    static UnsafeBuffer idempotentAppend(final long timestampMs, final Batch... batches)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        final IdempotentAppendEntryEncoder encoder = new IdempotentAppendEntryEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .timestampMs(timestampMs);
        final IdempotentAppendEntryEncoder.BatchesEncoder encodedBatches = encoder.batchesCount(batches.length);
        final List<String> records = new ArrayList<>();
        for (final Batch batch : batches)
        {
            encodedBatches.next()
                .recordCount(batch.records().length)
                .scope(batch.scope())
                .idHigh(batch.idHigh())
                .idLow(batch.idLow())
                .bodyDigest(batch.bodyDigest())
                .windowMs(batch.windowMs());
            records.addAll(List.of(batch.records()));
        }
        final IdempotentAppendEntryEncoder.RecordsEncoder encodedRecords = encoder.recordsCount(records.size());
        for (final String record : records)
        {
            final String[] keyAndPayload = record.split("=", 2);
            final byte[] payload = keyAndPayload[1].getBytes(StandardCharsets.UTF_8);
            encodedRecords.next().timestamp(timestampMs).key(keyAndPayload[0]).putPayload(payload, 0, payload.length);
        }
        return copy(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    /** Every record of the log as "position:key=payload", in position order. */
    static List<String> records(final RecordLog log) throws IOException
    {
        final List<String> read = new ArrayList<>();
        long from = log.firstPosition();
        int got;
        do
        {
            got = log.read(from, 100, (position, timestamp, buffer, keyOffset, keyLength, payloadOffset, payloadLength) ->
                read.add(position + ":" + buffer.getStringWithoutLengthUtf8(keyOffset, keyLength) + "=" +
                    buffer.getStringWithoutLengthUtf8(payloadOffset, payloadLength)));
            from += got;
        }
        while (got > 0);
        return read;
    }

    private static UnsafeBuffer copy(final ExpandableArrayBuffer buffer, final int length)
    {
        final byte[] bytes = new byte[length];
        buffer.getBytes(0, bytes);
        return new UnsafeBuffer(bytes);
    }
}
