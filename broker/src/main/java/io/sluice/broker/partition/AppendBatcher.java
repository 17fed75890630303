package io.sluice.broker.partition;

import io.sluice.broker.log.codecs.AppendEntryEncoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Coalesces concurrent appends to one partition into few Raft entries: while {@value #MAX_IN_FLIGHT} entries
 * are in flight, new batches queue up and go out together in the next entry. Each batch keeps its records
 * contiguous, so its positions are the entry's first position plus the records queued before it.
 * <p>
 * A batch arrives as encoded {@code AppendEntry.records} group elements (the group's layout: int64 timestamp,
 * uint32 key length + key, uint32 payload length + payload), so merging is a copy. Thread-safe.
 */
final class AppendBatcher
{
    static final int MAX_IN_FLIGHT = 4;
    static final int MAX_ENTRY_BYTES = 512 * 1024;
    static final int MAX_ENTRY_RECORDS = 65_535;
    private static final int GROUP_HEADER_LENGTH = AppendEntryEncoder.RecordsEncoder.sbeHeaderSize();
    private static final int HEADER_LENGTH = MessageHeaderEncoder.ENCODED_LENGTH + AppendEntryEncoder.BLOCK_LENGTH +
        GROUP_HEADER_LENGTH;

    private final Function<byte[], CompletableFuture<long[]>> submitter;
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private int inFlight;

    AppendBatcher(final Function<byte[], CompletableFuture<long[]>> submitter)
    {
        this.submitter = submitter;
    }

    /** Queues {@code count} records; completes with {firstPosition, count} once committed. */
    CompletableFuture<long[]> append(final byte[] elements, final int count)
    {
        final Pending pending = new Pending(elements, count, new CompletableFuture<>());
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
            int bytes = HEADER_LENGTH;
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
                    if (!batch.isEmpty() && (bytes + next.elements.length > MAX_ENTRY_BYTES ||
                        records + next.count > MAX_ENTRY_RECORDS))
                    {
                        break;
                    }
                    queue.poll();
                    batch.add(next);
                    bytes += next.elements.length;
                    records += next.count;
                }
                inFlight++;
            }
            submit(batch, bytes, records);
        }
    }

    private void submit(final List<Pending> batch, final int bytes, final int records)
    {
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

    private record Pending(byte[] elements, int count, CompletableFuture<long[]> future)
    {
    }
}
