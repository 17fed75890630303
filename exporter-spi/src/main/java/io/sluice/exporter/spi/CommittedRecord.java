package io.sluice.exporter.spi;

import org.agrona.DirectBuffer;

/**
 * A committed record as exporters see it: a view valid only during {@link Exporter#export} (the director reuses it
 * and its buffer for the next record), so an exporter that keeps anything copies it. {@link RecordJson} writes the
 * record's JSON form.
 */
public interface CommittedRecord
{
    /** The partition the record belongs to, 1..P. */
    int partitionId();

    /** The record's position in its partition: increasing by one from 1, never reused. */
    long position();

    /** When the leader appended the record, in epoch milliseconds. */
    long timestamp();

    /** The key, or null when the record has none (decoded on each call: prefer the bytes on a hot path). */
    String key();

    /** The buffer holding the key (UTF-8) at {@link #keyOffset()}, and the payload at {@link #payloadOffset()}. */
    DirectBuffer buffer();

    /** Where the key's UTF-8 bytes start in {@link #buffer()}. */
    int keyOffset();

    /** The key's length in bytes; -1 when the record has no key. */
    int keyLength();

    /** Where the payload starts in {@link #buffer()}: the JSON value the client sent, UTF-8. */
    int payloadOffset();

    /** The payload's length in bytes; 0 for an empty payload. */
    int payloadLength();
}
