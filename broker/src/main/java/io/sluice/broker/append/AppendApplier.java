package io.sluice.broker.append;

import io.sluice.broker.log.RecordLog;
import io.sluice.broker.log.codecs.AppendEntryDecoder;
import io.sluice.broker.log.codecs.AppendOutcome;
import io.sluice.broker.log.codecs.IdempotentAppendEntryDecoder;
import org.agrona.DirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.function.LongConsumer;

/**
 * The apply of a partition's append entries ({@code AppendEntry}, {@code IdempotentAppendEntry}): reads the entry
 * batch by batch and record by record through {@link AppendEntries.Reader}, each record's body where it lies in the
 * entry, consults the remembered ids ({@link AppendIdempotency}) and writes each new record into the
 * {@link RecordLog} with {@link RecordLog#append(long, DirectBuffer, int, int, int, int)}, the only copy here. Entries
 * are applied again after a restart (those after the last snapshot): positions are counted on from the snapshot's
 * last position ({@link #appliedPosition}), so the append ids an entry carried are remembered with the positions
 * they were first given, and only records at positions the log does not hold yet are written.
 * <p>
 * Not thread-safe: the state machine's apply thread only.
 */
public final class AppendApplier
{
    private static final Logger LOG = LoggerFactory.getLogger(AppendApplier.class);

    private final int brokerId;
    private final int partitionId;
    private final AppendIdempotency idempotency;
    private final LongConsumer recordsApplied;
    private final AppendReplies.BatchesReply batchesReply = new AppendReplies.BatchesReply();
    private final AppendEntries.Reader appendReader = new AppendEntries.Reader();
    /** Last position the applied entries gave out; equals the log's last position once a replay caught up. */
    private long appliedPosition;

    /** @param recordsApplied told the log's last position once an entry wrote records; must not block. */
    public AppendApplier(
        final int brokerId, final int partitionId, final AppendIdempotency idempotency, final LongConsumer recordsApplied)
    {
        this.brokerId = brokerId;
        this.partitionId = partitionId;
        this.idempotency = idempotency;
        this.recordsApplied = recordsApplied;
    }

    /** Whether entries of {@code templateId} are append entries, which this applies. */
    public static boolean isAppend(final int templateId)
    {
        return templateId == AppendEntryDecoder.TEMPLATE_ID || templateId == IdempotentAppendEntryDecoder.TEMPLATE_ID;
    }

    /** Counts positions on from {@code lastPosition}: the restored state's. */
    public void restart(final long lastPosition)
    {
        appliedPosition = lastPosition;
    }

    /**
     * Applies the append entry at Raft index {@code index} held by {@code entry}, whose header said
     * {@code templateId}, {@code blockLength} and {@code version}; returns the reply for its proposer, an encoded
     * {@code AppendResult} or {@code AppendBatchesResult} ({@link AppendReplies}), or {@link AppendReplies#NO_REPLY}
     * for a plain entry applied again.
     */
    public byte[] apply(
        final RecordLog log, final long index, final EntryBytes entry, final int templateId, final int blockLength,
        final int version) throws IOException
    {
        final int batchCount = appendReader.wrap(entry, templateId, blockLength, version);
        return templateId == AppendEntryDecoder.TEMPLATE_ID ? onAppend(log, index, batchCount) :
            onIdempotentAppend(log, index);
    }

    /** Drops every view of the entry just applied: they reach into Ratis's buffers. */
    public void release()
    {
        appendReader.release();
    }

    /**
     * Applies client batches without ids: every record at the next position, written into the log from the entry's
     * own bytes (a record's one copy there is into the segment).
     */
    private byte[] onAppend(final RecordLog log, final long index, final int batchCount) throws IOException
    {
        final long firstPosition = appliedPosition + 1;
        final long held = log.lastPosition();
        long position = firstPosition;
        boolean written = false;
        for (int b = 0; b < batchCount; b++)
        {
            appendReader.nextBatch();
            final int count = appendReader.recordCount();
            if (position + count - 1 > held)
            {
                if (!written)
                {
                    checkAppliedPosition(log, firstPosition, held);
                }
                written |= writeRecords(log, index, position, held);
            }
            position += count;
        }
        final int count = (int)(position - firstPosition);
        appliedPosition += count;
        if (!written)
        {
            // Applied again after a restart: the records are already in the log.
            return AppendReplies.NO_REPLY;
        }
        log.flushWrites();
        recordsApplied.accept(log.lastPosition());
        return AppendReplies.appendResult(firstPosition, count);
    }

    /**
     * Writes the current batch's records whose positions (the first is {@code position}) the log does not hold yet;
     * returns whether it wrote any.
     */
    private boolean writeRecords(final RecordLog log, final long index, final long firstPosition, final long held)
        throws IOException
    {
        final AppendEntries.Reader reader = appendReader;
        final int count = reader.recordCount();
        boolean written = false;
        for (int r = 0; r < count; r++)
        {
            reader.nextRecord();
            if (firstPosition + r > held)
            {
                log.append(index, reader.recordBuffer(), reader.recordOffset(), reader.recordLength(),
                    reader.recordBlockLength(), reader.recordVersion());
                written = true;
            }
        }
        return written;
    }

    /**
     * Applies client batches of which some carry an id: a batch whose id is remembered (and not expired on the
     * replicated clock) appends nothing and answers the remembered positions, or CONFLICT when its request digest
     * differs; any other batch appends and, with an id, is remembered from now on.
     */
    private byte[] onIdempotentAppend(final RecordLog log, final long index) throws IOException
    {
        final AppendEntries.Reader reader = appendReader;
        idempotency.advanceClock(reader.timestampMs());
        final long nowMs = idempotency.clockMs();
        final int batchCount = reader.batchCount();
        batchesReply.start(batchCount);
        final long firstPosition = appliedPosition + 1;
        // Applied again after a restart with its records in the log already: positions are counted below, the ids
        // remembered with them, and only records at positions the log does not hold are written.
        final long held = log.lastPosition();
        boolean written = false;
        for (int b = 0; b < batchCount; b++)
        {
            reader.nextBatch();
            final int recordCount = reader.recordCount();
            final IdempotencyTable table = idempotency.table(reader.scope());
            AppendOutcome outcome = AppendOutcome.APPENDED;
            final long first = appliedPosition + 1;
            long answeredFirst = first;
            int count = recordCount;
            if (table != null)
            {
                final int slot = table.find(reader.idHigh(), reader.idLow(), nowMs);
                if (slot >= 0)
                {
                    outcome = table.digest(slot) == reader.bodyDigest() ? AppendOutcome.DUPLICATE : AppendOutcome.CONFLICT;
                    answeredFirst = outcome == AppendOutcome.DUPLICATE ? table.firstPosition(slot) : -1;
                    count = outcome == AppendOutcome.DUPLICATE ? table.count(slot) : 0;
                }
                else
                {
                    table.put(reader.idHigh(), reader.idLow(), reader.bodyDigest(), first, recordCount,
                        nowMs + Math.max(0, reader.windowMs()));
                }
            }
            if (outcome == AppendOutcome.APPENDED)
            {
                appliedPosition += recordCount;
                if (appliedPosition > held)
                {
                    if (!written)
                    {
                        checkAppliedPosition(log, firstPosition, held);
                    }
                    written |= writeRecords(log, index, first, held);
                }
            }
            batchesReply.add(answeredFirst, count, outcome);
        }
        if (written)
        {
            log.flushWrites();
            recordsApplied.accept(log.lastPosition());
        }
        return batchesReply.bytes();
    }

    /**
     * Records are skipped by position, not by Raft index: a crash can leave only the first records of an entry
     * in the log (a segment rolled inside the entry, or a torn write), and applied again the entry must write the
     * rest rather than count the whole entry as held.
     */
    private void checkAppliedPosition(final RecordLog log, final long firstPosition, final long held)
    {
        if (firstPosition <= held)
        {
            LOG.info("partition {} on broker {}: the log holds positions {}..{} of an entry applied again, " +
                "writing the rest of it", partitionId, brokerId, firstPosition, held);
        }
        else if (held + 1 != firstPosition)
        {
            // Cannot happen while replays count positions as first given; log it loudly rather than hide it.
            LOG.error("partition {} on broker {}: applied positions expected {} next, the log has {} next",
                partitionId, brokerId, firstPosition, log.lastPosition() + 1);
        }
    }
}
