package io.sluice.broker.command;

import io.sluice.broker.log.codecs.IdempotencyScope;
import io.sluice.broker.log.codecs.RecordBodyEncoder;
import io.sluice.broker.append.AppendBatcher;
import io.sluice.broker.append.AppendEntries;
import io.sluice.broker.partition.Partition;
import io.sluice.protocol.codecs.AppendRequestDecoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.message.AppendLimits;
import io.sluice.protocol.message.ErrorResponseWriter;
import io.sluice.protocol.transport.ResponseChannel;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * An append: validates every record against the frame and the limits, then copies the records from the frame (a view
 * over the transport's buffer) into the batch's own array, the one copy they take on their way to the log, and hands
 * the batch to {@link Partition#append}.
 */
final class AppendHandler extends DecodingHandler<AppendRequestDecoder>
{
    private final ThreadLocal<Codecs> codecs = ThreadLocal.withInitial(Codecs::new);

    AppendHandler(final CommandContext context)
    {
        super(context, AppendRequestDecoder::new);
    }

    @Override
    void handle(final AppendRequestDecoder request, final int blockLength, final int version,
        final ResponseChannel response)
    {
        final Codecs c = codecs.get();
        // The message's view, bounded by the frame.
        final DirectBuffer message = request.buffer();
        final int partitionId = request.partitionId();
        final String pair = context.pair(partitionId);
        final AppendRequestDecoder.RecordsDecoder records = request.records();
        final int count = records.count();
        final AppendBatcher.AppendId id;
        try
        {
            id = appendId(request);
        }
        catch (final IllegalArgumentException e)
        {
            context.malformed(response, partitionId, pair + ": " + e.getMessage());
            return;
        }
        if (count < 1 && id == null)
        {
            context.invalid(response, partitionId, pair + ": an append needs at least one record");
            return;
        }
        final Partition partition = context.partitionOrRespond(partitionId, response);
        if (partition == null)
        {
            return;
        }
        final String diskFull = context.diskGuard == null ? null : context.diskGuard.refusal();
        if (diskFull != null)
        {
            // Only appends: exporter acknowledgements, pause and resume go on, so the log can compact and free the disk.
            context.diskGuard.countRefused();
            response.respond(ErrorResponseWriter.of(ErrorCode.DISK_FULL, partitionId, ErrorResponseWriter.NO_LEADER,
                diskFull));
            return;
        }

        // First pass: validate every length against the frame and size the records.
        long recordsLength = 0;
        for (final AppendRequestDecoder.RecordsDecoder record : records)
        {
            record.timestamp();
            final int keyLength = record.keyLength();
            record.skipKey();
            final int payloadLength = record.payloadLength();
            record.skipPayload();
            if (keyLength < 0 || payloadLength < 0)
            {
                context.malformed(response, partitionId, pair + ": negative key or payload length");
                return;
            }
            if (keyLength > AppendLimits.MAX_KEY_BYTES || payloadLength > AppendLimits.MAX_PAYLOAD_BYTES)
            {
                context.invalid(response, partitionId, pair + ": a record's " +
                    (keyLength > AppendLimits.MAX_KEY_BYTES ? "key of " + keyLength + " bytes exceeds the maximum of " +
                    AppendLimits.MAX_KEY_BYTES : "payload of " + payloadLength + " bytes exceeds the maximum of " +
                    AppendLimits.MAX_PAYLOAD_BYTES) + " bytes");
                return;
            }
            recordsLength += AppendEntries.recordLength(keyLength, payloadLength);
        }
        if (request.limit() > message.capacity() || recordsLength > message.capacity())
        {
            context.malformed(response, partitionId, pair + ": append request lengths run " +
                (request.limit() - message.capacity()) + " bytes past the frame");
            return;
        }
        if (recordsLength > AppendLimits.MAX_BATCH_BYTES)
        {
            // Proposing it would make an entry Raft cannot replicate: refuse it instead, before anything is written.
            context.invalid(response, partitionId, pair + ": a batch of " + recordsLength +
                " bytes (keys, payloads and record headers) exceeds the limit of " + AppendLimits.MAX_BATCH_BYTES + " bytes");
            return;
        }
        final byte[] batch = AppendEntries.newBatch(count, (int)recordsLength, id);
        if (copyRecords(c, request, batch, partitionId, response))
        {
            context.respondWhenDone(partition.append(batch), response, partitionId,
                (positions) -> ResponseWriters.append(partitionId, positions.firstPosition(), positions.count()));
        }
    }

    /**
     * Second pass: encodes the records into the batch's own array, copied from the frame. Answers INVALID_ARGUMENT and
     * returns false when a payload is not JSON.
     */
    private boolean copyRecords(
        final Codecs c, final AppendRequestDecoder request, final byte[] batch, final int partitionId,
        final ResponseChannel response)
    {
        final UnsafeBuffer batchBuffer = c.batch;
        batchBuffer.wrap(batch);
        final RecordBodyEncoder encoded = c.record;
        int cursor = AppendEntries.RECORDS_OFFSET;
        int index = 0;
        try
        {
            for (final AppendRequestDecoder.RecordsDecoder record : request.sbeRewind().records())
            {
                encoded.wrap(batchBuffer, cursor).timestamp(record.timestamp());
                record.wrapKey(c.keyView);
                encoded.putKey(c.keyView, 0, c.keyView.capacity());
                record.wrapPayload(c.payloadView);
                final int payloadLength = c.payloadView.capacity();
                encoded.putPayload(c.payloadView, 0, payloadLength);
                cursor = encoded.limit();
                final String problem = JsonPayloads.problem(batch, cursor - payloadLength, payloadLength);
                if (problem != null)
                {
                    context.invalid(response, partitionId, context.pair(partitionId) + ": record " + index + ": " +
                        problem + "; nothing was appended");
                    return false;
                }
                index++;
            }
            return true;
        }
        finally
        {
            batchBuffer.wrap(0, 0);
            c.keyView.wrap(0, 0);
            c.payloadView.wrap(0, 0);
        }
    }

    /** The batch's idempotency id, or null when the request carries none (window 0, or sent before version 2). */
    private static AppendBatcher.AppendId appendId(final AppendRequestDecoder request)
    {
        final long windowMs = request.idempotencyWindowMs();
        if (windowMs == AppendRequestDecoder.idempotencyWindowMsNullValue() || windowMs == 0)
        {
            return null;
        }
        if (windowMs < 0)
        {
            throw new IllegalArgumentException("idempotency window " + windowMs + " ms is negative");
        }
        final IdempotencyScope scope = switch (request.idempotencyScope())
        {
            case 1 -> IdempotencyScope.CLIENT;
            case 2 -> IdempotencyScope.GATEWAY;
            default -> throw new IllegalArgumentException("unknown idempotency scope " + request.idempotencyScope());
        };
        return new AppendBatcher.AppendId(scope, request.idHigh(), request.idLow(), request.bodyDigest(), windowMs);
    }

    /** Reusable encoder and views of one I/O thread. */
    private static final class Codecs
    {
        final RecordBodyEncoder record = new RecordBodyEncoder();
        final UnsafeBuffer keyView = new UnsafeBuffer(0, 0);
        final UnsafeBuffer payloadView = new UnsafeBuffer(0, 0);
        final UnsafeBuffer batch = new UnsafeBuffer(0, 0);
    }
}
