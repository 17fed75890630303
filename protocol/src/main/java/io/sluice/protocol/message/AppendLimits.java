package io.sluice.protocol.message;

import io.sluice.protocol.codecs.AppendRequestEncoder;

/**
 * The sizes an append must fit, the one owner of the record limits, shared by the gateway (which checks them once,
 * before anything is sent) and the broker (which checks them again on every append it takes, sizes its Raft buffers
 * from them and refuses a batch over them instead of proposing it). One Raft
 * entry carries at most one client batch over {@link #MAX_MERGED_ENTRY_BYTES}, so no entry exceeds
 * {@link #MAX_BATCH_BYTES} plus the entry's own headers, and Raft can always replicate it in one append.
 */
public final class AppendLimits
{
    /** Encoded records of one append batch at most: keys, payloads and per-record headers, not payloads alone. */
    public static final int MAX_BATCH_BYTES = 2 * 1024 * 1024;
    /**
     * Bytes a record costs in a batch besides its key and payload: timestamp, key length, payload length, as an
     * {@code AppendRequest} encodes them. The broker's append batches encode a record ({@code RecordBody}) the same
     * way, so this is a record's size in both.
     */
    public static final int RECORD_OVERHEAD_BYTES = AppendRequestEncoder.RecordsEncoder.sbeBlockLength() +
        AppendRequestEncoder.RecordsEncoder.keyHeaderLength() + AppendRequestEncoder.RecordsEncoder.payloadHeaderLength();
    /** Room for an entry's headers (its message header and block, one header per batch) over its records. */
    public static final int ENTRY_HEADROOM_BYTES = 64 * 1024;
    /** The largest Raft entry a partition proposes; Raft's appender and write buffers are sized from it. */
    public static final int MAX_ENTRY_BYTES = MAX_BATCH_BYTES + ENTRY_HEADROOM_BYTES;
    /** Concurrent batches are merged into one entry up to this size; a larger batch goes alone. */
    public static final int MAX_MERGED_ENTRY_BYTES = 512 * 1024;
    /** The largest record key, in UTF-8 bytes. */
    public static final int MAX_KEY_BYTES = 64 * 1024;
    /**
     * The largest payload of one record, in bytes: the gateway's {@code sluice.gateway.max-payload-bytes} may be
     * lower, never higher.
     */
    public static final int MAX_PAYLOAD_BYTES = 1024 * 1024;

    private AppendLimits()
    {
    }

    /** Bytes a record takes in a batch: in an {@code AppendRequest}, and in the broker's append batches. */
    public static long recordBytes(final int keyBytes, final int payloadBytes)
    {
        return RECORD_OVERHEAD_BYTES + (long)keyBytes + payloadBytes;
    }
}
