package io.sluice.exporter.spi;

import org.agrona.DirectBuffer;

/** A committed record as exporters see it: a view valid only during {@link Exporter#export}. */
public interface CommittedRecord
{
    int partitionId();

    long position();

    long timestamp();

    /** The key, or null when the record has none. */
    String key();

    /** The buffer holding the key (UTF-8) at {@link #keyOffset()}, and the payload at {@link #payloadOffset()}. */
    DirectBuffer buffer();

    int keyOffset();

    /** -1 when the record has no key. */
    int keyLength();

    int payloadOffset();

    int payloadLength();
}
