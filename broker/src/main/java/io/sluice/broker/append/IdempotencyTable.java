package io.sluice.broker.append;

import io.sluice.broker.log.codecs.IdempotencySnapshotDecoder.ScopesDecoder.IdsDecoder;
import io.sluice.broker.log.codecs.IdempotencySnapshotEncoder.ScopesEncoder;
import io.sluice.broker.log.codecs.IdempotencySnapshotEncoder.ScopesEncoder.IdsEncoder;
import org.agrona.collections.Long2LongHashMap;

/**
 * Remembered append ids of one scope, oldest first: a 128-bit id (the hash of an idempotency key and a
 * sub-batch index), the digest of the request it came with, the positions it was given and when it expires on
 * the partition's replicated clock. Part of the partition's replicated state: every replica applies the same
 * puts and expiries in the same order, so every replica remembers the same ids.
 * <p>
 * Bounded: at most {@code maxEntries}; a put into a full table forgets the oldest id first (counted in
 * {@link #evictedBeforeExpiry()}). Memory is primitive arrays in insertion order (a ring, grown by doubling up to the
 * bound) plus one primitive hash index from the id's high half to its sequence number, about
 * {@value #RING_BYTES_PER_ENTRY} + 2 × 16 / 0.65 bytes per id at the bound; see {@link #allocatedBytes()}.
 * <p>
 * In a snapshot a table is one scope of an {@code IdempotencySnapshot} message (broker-log-codecs.xml), its ids oldest
 * first; {@link AppendIdempotency} writes and reads the message around it.
 * <p>
 * Not thread-safe: used only on the state machine's apply thread (and by snapshots, on the same thread).
 */
public final class IdempotencyTable
{
    /** Bytes of ring storage per id: five longs and one int. */
    static final int RING_BYTES_PER_ENTRY = 5 * Long.BYTES + Integer.BYTES;
    private static final int INITIAL_CAPACITY = 64;
    private static final long MISSING = -1;

    private final int maxEntries;
    private final Long2LongHashMap index = new Long2LongHashMap(INITIAL_CAPACITY, 0.65f, MISSING);
    private long[] idHigh = new long[INITIAL_CAPACITY];
    private long[] idLow = new long[INITIAL_CAPACITY];
    private long[] digest = new long[INITIAL_CAPACITY];
    private long[] firstPosition = new long[INITIAL_CAPACITY];
    private long[] expiresAtMs = new long[INITIAL_CAPACITY];
    private int[] count = new int[INITIAL_CAPACITY];
    /** Sequence numbers: the oldest held id is {@code head}, the next put gets {@code tail}; slot = seq mod capacity. */
    private long head;
    private long tail;
    private long evictedBeforeExpiry;

    IdempotencyTable(final int maxEntries)
    {
        if (maxEntries < 1)
        {
            throw new IllegalArgumentException("maxEntries must be at least 1, was " + maxEntries);
        }
        this.maxEntries = maxEntries;
    }

    /** The slot of an id remembered and not expired at {@code nowMs}, or -1. */
    int find(final long high, final long low, final long nowMs)
    {
        final long seq = index.get(high);
        if (seq == MISSING)
        {
            return -1;
        }
        final int slot = slot(seq);
        if (idLow[slot] != low || expiresAtMs[slot] <= nowMs)
        {
            return -1;
        }
        return slot;
    }

    long digest(final int slot)
    {
        return digest[slot];
    }

    long firstPosition(final int slot)
    {
        return firstPosition[slot];
    }

    int count(final int slot)
    {
        return count[slot];
    }

    /** Remembers an id (replacing an expired or colliding one with the same high half for lookups). */
    void put(final long high, final long low, final long bodyDigest, final long first, final int records, final long expiresAt)
    {
        if (tail - head == maxEntries)
        {
            evictHead();
            evictedBeforeExpiry++;
        }
        if (tail - head == idHigh.length)
        {
            grow();
        }
        final long seq = tail++;
        final int slot = slot(seq);
        idHigh[slot] = high;
        idLow[slot] = low;
        digest[slot] = bodyDigest;
        firstPosition[slot] = first;
        count[slot] = records;
        expiresAtMs[slot] = expiresAt;
        index.put(high, seq);
    }

    /** Forgets every id at the head that expired at {@code nowMs}; ids behind a longer-lived one wait for it. */
    void expire(final long nowMs)
    {
        while (tail > head && expiresAtMs[slot(head)] <= nowMs)
        {
            evictHead();
        }
    }

    int size()
    {
        return (int)(tail - head);
    }

    long evictedBeforeExpiry()
    {
        return evictedBeforeExpiry;
    }

    /** Heap held by the ring arrays and the index, in bytes (array headers left out). */
    long allocatedBytes()
    {
        return (long)idHigh.length * RING_BYTES_PER_ENTRY + (long)index.capacity() * 2 * Long.BYTES;
    }

    void clear()
    {
        index.clear();
        head = 0;
        tail = 0;
        evictedBeforeExpiry = 0;
    }

    /** Bytes this table takes in a snapshot: its scope's block, the ids' group header and one block an id. */
    int snapshotLength()
    {
        return ScopesEncoder.sbeBlockLength() + IdsEncoder.sbeHeaderSize() + size() * IdsEncoder.sbeBlockLength();
    }

    /** Writes every id, oldest first, into the ids of {@code scope} (whose scope field the caller set). */
    void write(final ScopesEncoder scope)
    {
        final IdsEncoder ids = scope.idsCount(size());
        for (long seq = head; seq < tail; seq++)
        {
            final int slot = slot(seq);
            ids.next()
                .idHigh(idHigh[slot])
                .idLow(idLow[slot])
                .bodyDigest(digest[slot])
                .firstPosition(firstPosition[slot])
                .recordCount(count[slot])
                .expiresAtMs(expiresAtMs[slot]);
        }
    }

    /** Replaces the content with the ids of a snapshot's scope, written by {@link #write}. */
    void read(final IdsDecoder ids)
    {
        clear();
        for (final IdsDecoder id : ids)
        {
            put(id.idHigh(), id.idLow(), id.bodyDigest(), id.firstPosition(), id.recordCount(), id.expiresAtMs());
        }
        evictedBeforeExpiry = 0;
    }

    private void evictHead()
    {
        final int slot = slot(head);
        // A later put of the same high half points the index elsewhere: only the index's own entry goes.
        if (index.get(idHigh[slot]) == head)
        {
            index.remove(idHigh[slot]);
        }
        head++;
    }

    private int slot(final long seq)
    {
        return (int)(seq % idHigh.length);
    }

    private void grow()
    {
        final int capacity = (int)Math.min((long)idHigh.length * 2, Math.max(maxEntries, idHigh.length));
        final long[] newHigh = new long[capacity];
        final long[] newLow = new long[capacity];
        final long[] newDigest = new long[capacity];
        final long[] newFirst = new long[capacity];
        final long[] newExpires = new long[capacity];
        final int[] newCount = new int[capacity];
        for (long seq = head; seq < tail; seq++)
        {
            final int from = slot(seq);
            final int to = (int)(seq % capacity);
            newHigh[to] = idHigh[from];
            newLow[to] = idLow[from];
            newDigest[to] = digest[from];
            newFirst[to] = firstPosition[from];
            newExpires[to] = expiresAtMs[from];
            newCount[to] = count[from];
        }
        idHigh = newHigh;
        idLow = newLow;
        digest = newDigest;
        firstPosition = newFirst;
        expiresAtMs = newExpires;
        count = newCount;
    }
}
