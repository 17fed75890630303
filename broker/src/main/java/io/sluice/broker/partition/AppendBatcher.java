package io.sluice.broker.partition;

import io.sluice.broker.log.codecs.AppendEntryEncoder;
import io.sluice.broker.log.codecs.AppendOutcome;
import io.sluice.broker.log.codecs.IdempotencyScope;
import io.sluice.broker.log.codecs.IdempotentAppendEntryEncoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.message.AppendLimits;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.Function;

/**
 * Coalesces concurrent appends to one partition into few Raft entries: while {@value #MAX_IN_FLIGHT} entries
 * are in flight, new batches queue up and go out together in the next entry. Each batch keeps its records
 * contiguous, so its positions are the entry's first position plus the records queued before it.
 * <p>
 * A batch arrives as encoded {@code AppendEntry.records} group elements (the group's layout: int64 timestamp,
 * uint32 key length + key, uint32 payload length + payload), so merging is a copy.
 * <p>
 * When any batch of an entry carries an {@link AppendId}, the entry is an {@code IdempotentAppendEntry}: it lists
 * every batch (id or none) with its record count and the leader's clock, and the state machine answers per batch
 * (appended, a duplicate with the remembered positions, or a conflict). Thread-safe.
 */
public final class AppendBatcher
{
    static final int MAX_IN_FLIGHT = 4;
    static final int MAX_ENTRY_BYTES = AppendLimits.MAX_MERGED_ENTRY_BYTES;
    static final int MAX_ENTRY_RECORDS = 65_535;
    private static final int GROUP_HEADER_LENGTH = AppendEntryEncoder.RecordsEncoder.sbeHeaderSize();
    private static final int HEADER_LENGTH = MessageHeaderEncoder.ENCODED_LENGTH + AppendEntryEncoder.BLOCK_LENGTH +
        GROUP_HEADER_LENGTH;

    private static final int BATCH_LENGTH = IdempotentAppendEntryEncoder.BatchesEncoder.sbeBlockLength();
    private static final int IDEMPOTENT_HEADER_LENGTH = MessageHeaderEncoder.ENCODED_LENGTH +
        IdempotentAppendEntryEncoder.BLOCK_LENGTH + 2 * GROUP_HEADER_LENGTH;

    private final int partitionId;
    private final Function<byte[], CompletableFuture<long[]>> submitter;
    private final LongSupplier clockMs;
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private int inFlight;

    /**
     * @param submitter proposes an entry; completes with the state machine's answer: {firstPosition, count} for an
     *                  {@code AppendEntry}, {firstPosition, count, outcome} per batch for an {@code IdempotentAppendEntry}.
     * @param clockMs   the leader's clock, stamped on idempotent entries.
     */
    AppendBatcher(final int partitionId, final Function<byte[], CompletableFuture<long[]>> submitter, final LongSupplier clockMs)
    {
        this.partitionId = partitionId;
        this.submitter = submitter;
        this.clockMs = clockMs;
    }

    AppendBatcher(final Function<byte[], CompletableFuture<long[]>> submitter)
    {
        this(0, submitter, System::currentTimeMillis);
    }

    /** A batch's idempotency id: a 128-bit hash of (key, sub-batch index), the request's digest, how long to keep it. */
    public record AppendId(IdempotencyScope scope, long high, long low, long bodyDigest, long windowMs)
    {
    }

    /** Queues {@code count} records; completes with {firstPosition, count} once committed. */
    CompletableFuture<long[]> append(final byte[] elements, final int count)
    {
        return append(elements, count, null);
    }

    /**
     * Queues {@code count} records (0 only with an id) under an id or none; completes with {firstPosition, count}
     * once committed, the remembered ones for an id already applied, or fails with CONFLICT when the id came with
     * another request digest.
     */
    CompletableFuture<long[]> append(final byte[] elements, final int count, final AppendId id)
    {
        final Pending pending = new Pending(elements, count, id, new CompletableFuture<>());
        synchronized (this)
        {
            queue.add(pending);
        }
        drain();
        return pending.future;
    }

    private void drain()
    {
        while (true)
        {
            final List<Pending> batch = new ArrayList<>();
            int bytes = IDEMPOTENT_HEADER_LENGTH;
            int records = 0;
            synchronized (this)
            {
                if (inFlight >= MAX_IN_FLIGHT || queue.isEmpty())
                {
                    return;
                }
                while (!queue.isEmpty())
                {
                    final Pending next = queue.peek();
                    if (!batch.isEmpty() && (bytes + BATCH_LENGTH + next.elements.length > MAX_ENTRY_BYTES ||
                        records + next.count > MAX_ENTRY_RECORDS || batch.size() == MAX_ENTRY_RECORDS))
                    {
                        break;
                    }
                    queue.poll();
                    batch.add(next);
                    bytes += BATCH_LENGTH + next.elements.length;
                    records += next.count;
                }
                inFlight++;
            }
            submit(batch, bytes, records);
        }
    }

    private void submit(final List<Pending> batch, final int bytes, final int records)
    {
        final boolean idempotent = batch.stream().anyMatch((p) -> p.id != null);
        final byte[] entry = idempotent ? idempotentEntry(batch, records) : plainEntry(batch, records);

        CompletableFuture<long[]> committed;
        try
        {
            committed = submitter.apply(entry);
        }
        catch (final RuntimeException e)
        {
            committed = CompletableFuture.failedFuture(e);
        }
        committed.whenComplete((positions, error) ->
        {
            synchronized (this)
            {
                inFlight--;
            }
            if (error != null)
            {
                batch.forEach((p) -> p.future.completeExceptionally(error));
            }
            else if (idempotent)
            {
                completeIdempotent(batch, positions);
            }
            else
            {
                long position = positions[0];
                for (final Pending pending : batch)
                {
                    pending.future.complete(new long[] {position, pending.count});
                    position += pending.count;
                }
            }
            drain();
        });
    }

    private void completeIdempotent(final List<Pending> batch, final long[] outcomes)
    {
        if (outcomes.length != 3 * batch.size())
        {
            final IllegalStateException error = new IllegalStateException("partition " + partitionId +
                ": idempotent append answered " + outcomes.length / 3 + " batches of " + batch.size());
            batch.forEach((p) -> p.future.completeExceptionally(error));
            return;
        }
        for (int i = 0; i < batch.size(); i++)
        {
            final Pending pending = batch.get(i);
            final long outcome = outcomes[3 * i + 2];
            if (outcome == AppendOutcome.CONFLICT.value())
            {
                pending.future.completeExceptionally(new PartitionException(ErrorCode.CONFLICT, partitionId, -1,
                    "partition " + partitionId + ": the idempotency id was first used with another request body"));
            }
            else
            {
                pending.future.complete(new long[] {outcomes[3 * i], outcomes[3 * i + 1]});
            }
        }
    }

    private byte[] idempotentEntry(final List<Pending> batch, final int records)
    {
        int length = IDEMPOTENT_HEADER_LENGTH;
        for (final Pending pending : batch)
        {
            length += BATCH_LENGTH + pending.elements.length;
        }
        final byte[] entry = new byte[length];
        final UnsafeBuffer buffer = new UnsafeBuffer(entry);
        final IdempotentAppendEntryEncoder encoder = new IdempotentAppendEntryEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .timestampMs(clockMs.getAsLong());
        final IdempotentAppendEntryEncoder.BatchesEncoder batches = encoder.batchesCount(batch.size());
        for (final Pending pending : batch)
        {
            final AppendId id = pending.id;
            batches.next()
                .recordCount(pending.count)
                .scope(id == null ? IdempotencyScope.NONE : id.scope())
                .idHigh(id == null ? 0 : id.high())
                .idLow(id == null ? 0 : id.low())
                .bodyDigest(id == null ? 0 : id.bodyDigest())
                .windowMs(id == null ? 0 : id.windowMs());
        }
        // The records group: its header, then the elements copied as they came.
        final int groupOffset = encoder.limit();
        buffer.putShort(groupOffset, (short)IdempotentAppendEntryEncoder.RecordsEncoder.sbeBlockLength(), ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(groupOffset + 2, (short)records, ByteOrder.LITTLE_ENDIAN);
        int offset = groupOffset + GROUP_HEADER_LENGTH;
        for (final Pending pending : batch)
        {
            buffer.putBytes(offset, pending.elements);
            offset += pending.elements.length;
        }
        return entry;
    }

    private static byte[] plainEntry(final List<Pending> batch, final int records)
    {
        int bytes = HEADER_LENGTH;
        for (final Pending pending : batch)
        {
            bytes += pending.elements.length;
        }
        final byte[] entry = new byte[bytes];
        final UnsafeBuffer buffer = new UnsafeBuffer(entry);
        new MessageHeaderEncoder().wrap(buffer, 0)
            .blockLength(AppendEntryEncoder.BLOCK_LENGTH)
            .templateId(AppendEntryEncoder.TEMPLATE_ID)
            .schemaId(AppendEntryEncoder.SCHEMA_ID)
            .version(AppendEntryEncoder.SCHEMA_VERSION);
        final int groupOffset = MessageHeaderEncoder.ENCODED_LENGTH + AppendEntryEncoder.BLOCK_LENGTH;
        buffer.putShort(groupOffset, (short)AppendEntryEncoder.RecordsEncoder.sbeBlockLength(), ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(groupOffset + 2, (short)records, ByteOrder.LITTLE_ENDIAN);
        int offset = HEADER_LENGTH;
        for (final Pending pending : batch)
        {
            buffer.putBytes(offset, pending.elements);
            offset += pending.elements.length;
        }
        return entry;
    }

    private record Pending(byte[] elements, int count, AppendId id, CompletableFuture<long[]> future)
    {
    }
}
