package io.sluice.exporter.spi;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.core.json.JsonFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The JSON form of a record that every built-in sink writes (a file line, a search document's source, a Kafka
 * record's value): {@code {"partitionId":2,"position":123,"key":"order-42","timestamp":1764420000000,"payload":{...}}},
 * the payload being the JSON value the client sent, or {@code null} when empty.
 * <p>
 * Every field is written by a JSON encoder and the payload is copied token by token through a parser (numbers
 * exactly as written), so nothing a client sent is spliced in: no payload can end a line early or forge another
 * record. Brokers refuse payloads that are not one JSON value, but records stored before they did may hold anything:
 * such a payload is written as a JSON string. Thread-safe.
 */
public final class RecordJson
{
    private static final JsonFactory JSON = new JsonFactory();

    private RecordJson()
    {
    }

    /** Writes the record's JSON (no trailing newline) to {@code out}; its I/O errors come as {@link UncheckedIOException}. */
    public static void write(final CommittedRecord record, final OutputStream out)
    {
        final int payloadLength = record.payloadLength();
        final DirectBuffer buffer = record.buffer();
        final byte[] array;
        final int offset;
        if (payloadLength > 0 && buffer.byteArray() != null)
        {
            array = buffer.byteArray();
            offset = (int)buffer.wrapAdjustment() + record.payloadOffset();
        }
        else
        {
            array = new byte[payloadLength];
            buffer.getBytes(record.payloadOffset(), array, 0, payloadLength);
            offset = 0;
        }
        final ByteArrayOutputStream attempt = new ByteArrayOutputStream(payloadLength + 128);
        try
        {
            writeObject(record, array, offset, payloadLength, false, attempt);
        }
        catch (final JacksonException e)
        {
            attempt.reset();
            writeObject(record, array, offset, payloadLength, true, attempt);
        }
        try
        {
            attempt.writeTo(out);
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    /** Writes the record's JSON at {@code offset} of a buffer that grows on demand and returns its length. */
    public static int write(final CommittedRecord record, final MutableDirectBuffer buffer, final int offset)
    {
        final byte[] bytes = toBytes(record);
        buffer.putBytes(offset, bytes);
        return bytes.length;
    }

    /** The record's JSON as a new array. */
    public static byte[] toBytes(final CommittedRecord record)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream(record.payloadLength() + 128);
        write(record, out);
        return out.toByteArray();
    }

    private static void writeObject(
        final CommittedRecord record,
        final byte[] payload,
        final int payloadOffset,
        final int payloadLength,
        final boolean payloadAsText,
        final OutputStream target)
    {
        try (JsonGenerator out = JSON.createGenerator(target))
        {
            out.writeStartObject();
            out.writeNumberProperty("partitionId", record.partitionId());
            out.writeNumberProperty("position", record.position());
            final String key = record.key();
            if (key == null)
            {
                out.writeNullProperty("key");
            }
            else
            {
                out.writeStringProperty("key", key);
            }
            out.writeNumberProperty("timestamp", record.timestamp());
            out.writeName("payload");
            if (payloadLength == 0)
            {
                out.writeNull();
            }
            else if (payloadAsText)
            {
                out.writeString(new String(payload, payloadOffset, payloadLength, StandardCharsets.UTF_8));
            }
            else
            {
                copyValue(out, payload, payloadOffset, payloadLength);
            }
            out.writeEndObject();
        }
    }

    /** Copies exactly one JSON value; throws if the bytes are anything else. */
    private static void copyValue(final JsonGenerator out, final byte[] payload, final int offset, final int length)
    {
        try (JsonParser in = JSON.createParser(payload, offset, length))
        {
            if (in.nextToken() == null)
            {
                throw new StreamReadException(in, "no JSON value");
            }
            out.copyCurrentStructureExact(in);
            if (in.nextToken() != null)
            {
                throw new StreamReadException(in, "more than one JSON value");
            }
        }
    }
}
