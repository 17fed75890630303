package io.sluice.gateway.records;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Picks a record's partition: a key goes by a stable hash of its UTF-8 bytes (32-bit MurmurHash3, seed 0,
 * the same in every JVM and every gateway), so the same key always lands on the same partition; records
 * without a key go round-robin. Thread-safe.
 */
public final class PartitionSelector
{
    private final int partitionCount;
    private final AtomicInteger roundRobin = new AtomicInteger();

    public PartitionSelector(final int partitionCount)
    {
        if (partitionCount < 1)
        {
            throw new IllegalArgumentException("partition count must be at least 1, was " + partitionCount);
        }
        this.partitionCount = partitionCount;
    }

    /** Partition id 1..P for the key, or the next in round-robin order when the key is null. */
    public int partitionFor(final String key)
    {
        if (key == null)
        {
            return Math.floorMod(roundRobin.getAndIncrement(), partitionCount) + 1;
        }
        return Math.floorMod(murmur3(key.getBytes(StandardCharsets.UTF_8)), partitionCount) + 1;
    }

    /** MurmurHash3 x86 32-bit with seed 0, over little-endian 4-byte blocks. */
    static int murmur3(final byte[] data)
    {
        final int c1 = 0xcc9e2d51;
        final int c2 = 0x1b873593;
        int h = 0;
        final int blocks = data.length / 4;
        for (int i = 0; i < blocks; i++)
        {
            final int at = i * 4;
            int k = (data[at] & 0xff) | (data[at + 1] & 0xff) << 8 | (data[at + 2] & 0xff) << 16 | (data[at + 3] & 0xff) << 24;
            k *= c1;
            k = Integer.rotateLeft(k, 15);
            k *= c2;
            h ^= k;
            h = Integer.rotateLeft(h, 13);
            h = h * 5 + 0xe6546b64;
        }
        final int tail = blocks * 4;
        int k = 0;
        switch (data.length & 3)
        {
            case 3:
                k ^= (data[tail + 2] & 0xff) << 16;
                // fall through
            case 2:
                k ^= (data[tail + 1] & 0xff) << 8;
                // fall through
            case 1:
                k ^= data[tail] & 0xff;
                k *= c1;
                k = Integer.rotateLeft(k, 15);
                k *= c2;
                h ^= k;
                break;
            default:
                break;
        }
        h ^= data.length;
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        h ^= h >>> 16;
        return h;
    }
}
