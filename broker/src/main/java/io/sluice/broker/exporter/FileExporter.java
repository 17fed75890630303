package io.sluice.broker.exporter;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.core.json.JsonFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes records as JSON lines to {@code <path>/partition-<id>.jsonl}, one record a line:
 * {@code {"partitionId":2,"position":123,"key":"order-42","timestamp":1764420000000,"payload":{...}}},
 * the payload being the JSON value the client sent (or {@code null} when empty). Every line is written by a JSON
 * encoder, the payload copied through a parser, so no payload can end a line early or forge another one.
 * <p>
 * Each line goes to the OS in one append-mode write before the record is acknowledged (flushed to the OS,
 * not fsynced, so it survives a process crash but not a power loss; {@link #close} forces it to disk).
 * Whole-line appends keep the file well-formed when brokers of one JVM share the folder, as only a
 * partition's leader writes that partition's file. The file is opened on the first record, so a paused
 * exporter leaves no trace in the sink.
 */
public final class FileExporter implements Exporter
{
    public static final String TYPE = "file";
    public static final String PATH_PROPERTY = "path";

    private static final Logger LOG = LoggerFactory.getLogger(FileExporter.class);
    private static final JsonFactory JSON = new JsonFactory();

    private final LineBuffer line = new LineBuffer();
    private byte[] payload = new byte[1024];
    private Path file;
    private FileChannel channel;
    private ExporterController controller;
    private int partitionId;

    @Override
    public void configure(final ExporterContext context)
    {
        final String path = context.properties().get(PATH_PROPERTY);
        final Path directory = path == null || path.isBlank() ?
            context.dataDir().resolve("exports").resolve(context.id()) : Path.of(path);
        partitionId = context.partitionId();
        file = directory.resolve("partition-" + partitionId + ".jsonl");
    }

    @Override
    public void open(final ExporterController controller)
    {
        this.controller = controller;
    }

    @Override
    public void export(final CommittedRecord record) throws IOException
    {
        if (channel == null)
        {
            Files.createDirectories(file.getParent());
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND);
        }
        final int payloadLength = record.payloadLength();
        if (payload.length < payloadLength)
        {
            payload = new byte[Math.max(payloadLength, payload.length * 2)];
        }
        record.buffer().getBytes(record.payloadOffset(), payload, 0, payloadLength);
        line.reset();
        try
        {
            writeLine(record, payloadLength, false);
        }
        catch (final JacksonException e)
        {
            // Brokers refuse payloads that are not one JSON value, but records stored before they did may hold
            // anything: such a payload is exported as a JSON string, so it can never end the line or start another.
            LOG.warn("partition {}: the payload at position {} is not valid JSON ({}); exporting it as a string",
                partitionId, record.position(), e.getOriginalMessage());
            line.reset();
            writeLine(record, payloadLength, true);
        }
        line.write('\n');

        final ByteBuffer bytes = ByteBuffer.wrap(line.bytes(), 0, line.size());
        while (bytes.hasRemaining())
        {
            channel.write(bytes);
        }
        controller.acknowledge(record.position());
    }

    /** One record as a JSON object, every field written by the encoder: nothing the client sent is spliced in. */
    private void writeLine(final CommittedRecord record, final int payloadLength, final boolean payloadAsText)
    {
        try (JsonGenerator out = JSON.createGenerator(line))
        {
            out.writeStartObject();
            out.writeNumberProperty("partitionId", partitionId);
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
                out.writeString(new String(payload, 0, payloadLength, StandardCharsets.UTF_8));
            }
            else
            {
                copyPayload(out, payloadLength);
            }
            out.writeEndObject();
        }
    }

    /** Copies the payload token by token (numbers exactly as written); throws unless it is exactly one JSON value. */
    private void copyPayload(final JsonGenerator out, final int payloadLength)
    {
        try (JsonParser in = JSON.createParser(payload, 0, payloadLength))
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

    /** A byte array output stream that hands out its buffer instead of copying it. */
    private static final class LineBuffer extends ByteArrayOutputStream
    {
        LineBuffer()
        {
            super(1024);
        }

        byte[] bytes()
        {
            return buf;
        }
    }

    @Override
    public void close() throws IOException
    {
        if (channel != null)
        {
            try
            {
                channel.force(false);
            }
            finally
            {
                channel.close();
                channel = null;
            }
        }
    }
}
