package io.sluice.broker.append;

import io.sluice.broker.errors.PartitionException;
import io.sluice.broker.log.codecs.AppendBatchDecoder;
import io.sluice.broker.log.codecs.AppendOutcome;
import io.sluice.broker.log.codecs.IdempotencyScope;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.message.AppendLimits;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

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
 * A batch arrives encoded in its own array ({@link AppendEntries#newBatch}); an entry is a view of it when alone and a
 * rope over the batches' arrays when merged: no batch is copied here.
 * <p>
 * When any batch of an entry carries an {@link AppendId}, the entry is an {@code IdempotentAppendEntry}: it carries
 * the leader's clock (each batch carries its own id, or none, and record count), and the state machine answers per
 * batch (appended, a duplicate with the remembered positions, or a conflict). Thread-safe: the queue and the
 * in-flight count are guarded by the batcher's monitor; an entry is built and submitted outside it, by the thread
 * that took its batches from the queue.
 */
public final class AppendBatcher
{
    static final int MAX_IN_FLIGHT = 4;
    static final int MAX_ENTRY_BYTES = AppendLimits.MAX_MERGED_ENTRY_BYTES;
    static final int MAX_ENTRY_RECORDS = 65_535;

    private final int partitionId;
    private final Function<ByteString, CompletableFuture<AppendOutcomes>> submitter;
    private final LongSupplier clockMs;
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private int inFlight;

    /**
     * @param submitter proposes an entry; completes with the state machine's answer: one batch covering an
     *                  {@code AppendEntry}'s records, or one per batch of an {@code IdempotentAppendEntry}.
     * @param clockMs   the leader's clock, stamped on idempotent entries.
     */
    public AppendBatcher(final int partitionId, final Function<ByteString, CompletableFuture<AppendOutcomes>> submitter, final LongSupplier clockMs)
    {
        this.partitionId = partitionId;
        this.submitter = submitter;
        this.clockMs = clockMs;
    }

    AppendBatcher(final Function<ByteString, CompletableFuture<AppendOutcomes>> submitter)
    {
        this(0, submitter, System::currentTimeMillis);
    }

    /** A batch's idempotency id: a 128-bit hash of (key, sub-batch index), the request's digest, how long to keep it. */
    public record AppendId(IdempotencyScope scope, long high, long low, long bodyDigest, long windowMs)
    {
    }

    /**
     * Queues a batch made by {@link AppendEntries#newBatch} (0 records only with an id), whose array is the batcher's
     * from now on; completes with its records' positions once committed, the remembered ones for an id already
     * applied, or fails with CONFLICT when the id came with another request digest.
     */
    public CompletableFuture<AppendPositions> append(final byte[] batch)
    {
        final AppendBatchDecoder header = AppendEntries.batchHeader(batch);
        final Pending pending = new Pending(batch, header.recordCount(), header.scope() != IdempotencyScope.NONE,
            new CompletableFuture<>());
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
            int bytes = AppendEntries.IDEMPOTENT_HEADER_LENGTH;
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
                    final int nextBytes = AppendEntries.entryLength(next.batch);
                    if (!batch.isEmpty() && (bytes + nextBytes > MAX_ENTRY_BYTES ||
                        records + next.count > MAX_ENTRY_RECORDS || batch.size() == MAX_ENTRY_RECORDS))
                    {
                        break;
                    }
                    queue.poll();
                    batch.add(next);
                    bytes += nextBytes;
                    records += next.count;
                }
                inFlight++;
            }
            submit(batch);
        }
    }

    private void submit(final List<Pending> batch)
    {
        final boolean idempotent = batch.stream().anyMatch(Pending::hasId);
        final List<byte[]> batches = new ArrayList<>(batch.size());
        batch.forEach((p) -> batches.add(p.batch));
        final ByteString entry = idempotent ?
            AppendEntries.idempotentEntry(clockMs.getAsLong(), batches) : AppendEntries.plainEntry(batches);

        CompletableFuture<AppendOutcomes> committed;
        try
        {
            committed = submitter.apply(entry);
        }
        catch (final RuntimeException e)
        {
            committed = CompletableFuture.failedFuture(e);
        }
        committed.whenComplete((outcomes, error) ->
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
                completeIdempotent(batch, outcomes);
            }
            else
            {
                // A plain entry's records are the batches' records in order, so each batch's follow the previous.
                long position = outcomes.firstPosition(0);
                for (final Pending pending : batch)
                {
                    pending.future.complete(new AppendPositions(position, pending.count));
                    position += pending.count;
                }
            }
            drain();
        });
    }

    private void completeIdempotent(final List<Pending> batch, final AppendOutcomes outcomes)
    {
        if (outcomes.batchCount() != batch.size())
        {
            final IllegalStateException error = new IllegalStateException("partition " + partitionId +
                ": idempotent append answered " + outcomes.batchCount() + " batches of " + batch.size());
            batch.forEach((p) -> p.future.completeExceptionally(error));
            return;
        }
        for (int i = 0; i < batch.size(); i++)
        {
            final Pending pending = batch.get(i);
            if (outcomes.outcome(i) == AppendOutcome.CONFLICT)
            {
                pending.future.completeExceptionally(new PartitionException(ErrorCode.CONFLICT, partitionId, -1,
                    "partition " + partitionId + ": the idempotency id was first used with another request body"));
            }
            else
            {
                pending.future.complete(new AppendPositions(outcomes.firstPosition(i), outcomes.recordCount(i)));
            }
        }
    }

    private record Pending(byte[] batch, int count, boolean hasId, CompletableFuture<AppendPositions> future)
    {
    }
}
