package io.sluice.exporter.opensearch;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The documents of the next bulk request, in position order, bounded by record count and bytes: a record that
 * does not fit waits until the buffer is sent, so memory stays bounded while the sink is down. One record
 * larger than the byte bound is sent alone. A failed bulk stays here (less what succeeded) and is sent again.
 * Not thread-safe: used by the exporter's one calling thread.
 */
final class BulkBuffer
{
    /** Bytes of a bulk action line and framing besides the source: {@code {"index":{"_id":"..."}}}, newlines. */
    static final int ACTION_OVERHEAD_BYTES = 64;

    /** One buffered document: its record's position, its {@code _id} and its source (the record's JSON). */
    record Document(long position, String id, String source, int bytes)
    {
    }

    private final int maxRecords;
    private final long maxBytes;
    private final long maxDelayNanos;
    private final List<Document> documents = new ArrayList<>();
    private long bytes;
    private long oldestAddedNanos;

    BulkBuffer(final int maxRecords, final long maxBytes, final long maxDelayNanos)
    {
        this.maxRecords = maxRecords;
        this.maxBytes = maxBytes;
        this.maxDelayNanos = maxDelayNanos;
    }

    static int sizeOf(final String id, final int sourceBytes)
    {
        return sourceBytes + id.length() + ACTION_OVERHEAD_BYTES;
    }

    /** True when a document of {@code size} bytes fits now; an empty buffer takes any one document. */
    boolean fits(final int size)
    {
        return documents.isEmpty() || documents.size() < maxRecords && bytes + size <= maxBytes;
    }

    void add(final Document document, final long nowNanos)
    {
        if (documents.isEmpty())
        {
            oldestAddedNanos = nowNanos;
        }
        documents.add(document);
        bytes += document.bytes();
    }

    /** Full: no further record may join, so it should be sent now. */
    boolean isFull()
    {
        return documents.size() >= maxRecords || bytes >= maxBytes;
    }

    /** The oldest document has waited its maximum delay. */
    boolean isDue(final long nowNanos)
    {
        return !documents.isEmpty() && nowNanos - oldestAddedNanos >= maxDelayNanos;
    }

    boolean isEmpty()
    {
        return documents.isEmpty();
    }

    int size()
    {
        return documents.size();
    }

    long bytes()
    {
        return bytes;
    }

    List<Document> documents()
    {
        return documents;
    }

    /** The lowest buffered position; the buffer must not be empty. */
    long lowestPosition()
    {
        return documents.get(0).position();
    }

    /** Drops the documents that are done (sent, or dead-lettered), keeping the others in order. */
    void removeIf(final Predicate<Document> done)
    {
        documents.removeIf(done);
        long remaining = 0;
        for (final Document document : documents)
        {
            remaining += document.bytes();
        }
        bytes = remaining;
    }
}
