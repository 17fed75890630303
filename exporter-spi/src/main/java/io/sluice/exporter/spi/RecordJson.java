package io.sluice.exporter.spi;

import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;

/**
 * The JSON form of a record that every built-in sink writes (a file line, a search document's source, a Kafka
 * record's value): {@code {"partitionId":2,"position":123,"key":"order-42","timestamp":1764420000000,"payload":{...}}},
 * the payload being the JSON the client sent (validated when it was written) or {@code null} when empty.
 * Stateless and thread-safe; it writes into the caller's buffer, so encoding allocates only for escaped keys.
 */
public final class RecordJson
{
    private RecordJson()
    {
    }

    /**
     * Writes the record's JSON at {@code offset} (no trailing newline) and returns its length. The buffer must
     * grow on demand (an {@code ExpandableArrayBuffer}) or be large enough.
     */
    public static int write(final CommittedRecord record, final MutableDirectBuffer buffer, final int offset)
    {
        int at = offset;
        at += buffer.putStringWithoutLengthAscii(at, "{\"partitionId\":");
        at += buffer.putIntAscii(at, record.partitionId());
        at += buffer.putStringWithoutLengthAscii(at, ",\"position\":");
        at += buffer.putLongAscii(at, record.position());
        at += buffer.putStringWithoutLengthAscii(at, ",\"key\":");
        final String key = record.key();
        if (key == null)
        {
            at += buffer.putStringWithoutLengthAscii(at, "null");
        }
        else
        {
            at = putJsonString(buffer, at, key);
        }
        at += buffer.putStringWithoutLengthAscii(at, ",\"timestamp\":");
        at += buffer.putLongAscii(at, record.timestamp());
        at += buffer.putStringWithoutLengthAscii(at, ",\"payload\":");
        if (record.payloadLength() == 0)
        {
            at += buffer.putStringWithoutLengthAscii(at, "null");
        }
        else
        {
            buffer.putBytes(at, record.buffer(), record.payloadOffset(), record.payloadLength());
            at += record.payloadLength();
        }
        buffer.putByte(at++, (byte)'}');
        return at - offset;
    }

    /** The record's JSON as a new array, for sinks whose clients take their own copy anyway. */
    public static byte[] toBytes(final CommittedRecord record)
    {
        final org.agrona.ExpandableArrayBuffer buffer = new org.agrona.ExpandableArrayBuffer(
            record.payloadLength() + (record.key() == null ? 0 : record.key().length() * 2) + 128);
        final int length = write(record, buffer, 0);
        final byte[] bytes = new byte[length];
        buffer.getBytes(0, bytes);
        return bytes;
    }

    private static int putJsonString(final MutableDirectBuffer buffer, final int offset, final String value)
    {
        int at = offset;
        buffer.putByte(at++, (byte)'"');
        final StringBuilder escaped = new StringBuilder(value.length() + 8);
        for (int i = 0; i < value.length(); i++)
        {
            final char c = value.charAt(i);
            switch (c)
            {
                case '"' -> escaped.append("\\\"");
                case '\\' -> escaped.append("\\\\");
                case '\n' -> escaped.append("\\n");
                case '\r' -> escaped.append("\\r");
                case '\t' -> escaped.append("\\t");
                default ->
                {
                    if (c < 0x20)
                    {
                        escaped.append(String.format("\\u%04x", (int)c));
                    }
                    else
                    {
                        escaped.append(c);
                    }
                }
            }
        }
        final byte[] utf8 = escaped.toString().getBytes(StandardCharsets.UTF_8);
        buffer.putBytes(at, utf8);
        at += utf8.length;
        buffer.putByte(at++, (byte)'"');
        return at;
    }
}
