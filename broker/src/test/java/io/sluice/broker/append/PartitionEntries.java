package io.sluice.broker.append;

import io.sluice.broker.backfill.BackfillMessages;
import io.sluice.broker.backfill.BackfillEntry;
import io.sluice.broker.log.RecordLog;
import io.sluice.broker.log.codecs.ExporterPositionsEntryEncoder;
import io.sluice.broker.log.codecs.IdempotencyScope;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.broker.log.codecs.RecordBodyDecoder;
import io.sluice.broker.log.codecs.RecordBodyEncoder;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Log entries as the broker proposes them, built with the generated encoders, for tests of the apply path. */
public final class PartitionEntries
{
    private PartitionEntries()
    {
    }

    /** An {@code AppendEntry} of one batch of records whose keys and payloads are the given strings ("key=payload"). */
    public static UnsafeBuffer append(final String... records)
    {
        return contiguous(AppendEntries.plainEntry(List.of(batch(null, 1_000, true, records))));
    }

    /**
     * A batch as the command API encodes one ({@link AppendEntries#newBatch}), of "key=payload" records under
     * {@code id} (null: none); timestamps count up from {@code firstTimestamp} when {@code counting}, else all equal it.
     */
    public static byte[] batch(final AppendBatcher.AppendId id, final long firstTimestamp, final boolean counting,
        final String... records)
    {
        long length = 0;
        for (final String record : records)
        {
            final String[] keyAndPayload = record.split("=", 2);
            length += AppendEntries.recordLength(utf8(keyAndPayload[0]).length, utf8(keyAndPayload[1]).length);
        }
        final byte[] batch = AppendEntries.newBatch(records.length, (int)length, id);
        final UnsafeBuffer buffer = new UnsafeBuffer(batch);
        final RecordBodyEncoder encoder = new RecordBodyEncoder();
        int cursor = AppendEntries.RECORDS_OFFSET;
        long timestamp = firstTimestamp;
        for (final String record : records)
        {
            final String[] keyAndPayload = record.split("=", 2);
            final byte[] key = utf8(keyAndPayload[0]);
            final byte[] payload = utf8(keyAndPayload[1]);
            cursor = encoder.wrap(buffer, cursor).timestamp(timestamp).putKey(key, 0, key.length)
                .putPayload(payload, 0, payload.length).limit();
            timestamp += counting ? 1 : 0;
        }
        return batch;
    }

    /** The entry's bytes in one buffer, as a follower or a replay applies them. */
    public static UnsafeBuffer contiguous(final ByteString entry)
    {
        return new UnsafeBuffer(entry.toByteArray());
    }

    /** Every record of an append entry as "key=payload", in order, read the way the apply reads them. */
    public static List<String> records(final ByteString entry) throws IOException
    {
        final EntryBytes bytes = new EntryBytes().wrap(entry.asReadOnlyByteBufferList());
        final MessageHeaderDecoder header = new MessageHeaderDecoder()
            .wrap(new UnsafeBuffer(entry.substring(0, MessageHeaderDecoder.ENCODED_LENGTH).toByteArray()), 0);
        final AppendEntries.Reader reader = new AppendEntries.Reader();
        final int batches = reader.wrap(bytes, header.templateId(), header.blockLength(), header.version());
        final RecordBodyDecoder body = new RecordBodyDecoder();
        final List<String> read = new ArrayList<>();
        for (int b = 0; b < batches; b++)
        {
            reader.nextBatch();
            for (int r = 0; r < reader.recordCount(); r++)
            {
                reader.nextRecord();
                body.wrap(reader.recordBuffer(), reader.recordOffset(), reader.recordBlockLength(), reader.recordVersion());
                body.timestamp();
                final String key = body.key();
                final byte[] payload = new byte[body.payloadLength()];
                body.getPayload(payload, 0, payload.length);
                read.add(key + "=" + new String(payload, StandardCharsets.UTF_8));
            }
        }
        return read;
    }

    private static byte[] utf8(final String text)
    {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    public static UnsafeBuffer exporterPositions(final Map<String, Long> positions)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(128);
        final ExporterPositionsEntryEncoder encoder = new ExporterPositionsEntryEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        final ExporterPositionsEntryEncoder.ExportersEncoder exporters = encoder.exportersCount(positions.size());
        positions.forEach((id, position) -> exporters.next().position(position).exporterId(id));
        return copy(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    public static UnsafeBuffer backfill(final BackfillEntry entry)
    {
        return new UnsafeBuffer(BackfillMessages.encode(entry));
    }

    /** One client batch of an {@code IdempotentAppendEntry}: its id (scope NONE: none) and "key=payload" records. */
    public record Batch(IdempotencyScope scope, long idHigh, long idLow, long bodyDigest, long windowMs, String... records)
    {
        public static Batch withoutId(final String... records)
        {
            return new Batch(IdempotencyScope.NONE, 0, 0, 0, 0, records);
        }
    }

    public static UnsafeBuffer idempotentAppend(final long timestampMs, final Batch... batches)
    {
        return contiguous(idempotentEntry(timestampMs, batches));
    }

    /** An {@code IdempotentAppendEntry} as the leader proposes it: a rope over the batches' own arrays. */
    public static ByteString idempotentEntry(final long timestampMs, final Batch... batches)
    {
        final List<byte[]> encoded = new ArrayList<>();
        for (final Batch batch : batches)
        {
            final AppendBatcher.AppendId id = batch.scope() == IdempotencyScope.NONE ? null :
                new AppendBatcher.AppendId(batch.scope(), batch.idHigh(), batch.idLow(), batch.bodyDigest(), batch.windowMs());
            encoded.add(batch(id, timestampMs, false, batch.records()));
        }
        return AppendEntries.idempotentEntry(timestampMs, encoded);
    }

    /** Every record of the log as "position:key=payload", in position order. */
    public static List<String> records(final RecordLog log) throws IOException
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
