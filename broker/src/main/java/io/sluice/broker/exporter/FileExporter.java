package io.sluice.broker.exporter;

import org.agrona.ExpandableArrayBuffer;

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
 * the payload being the JSON bytes the client sent (or {@code null} when empty).
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

    private final ExpandableArrayBuffer line = new ExpandableArrayBuffer(1024);
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
        int length = 0;
        length += line.putStringWithoutLengthAscii(length, "{\"partitionId\":");
        length += line.putIntAscii(length, partitionId);
        length += line.putStringWithoutLengthAscii(length, ",\"position\":");
        length += line.putLongAscii(length, record.position());
        length += line.putStringWithoutLengthAscii(length, ",\"key\":");
        final String key = record.key();
        if (key == null)
        {
            length += line.putStringWithoutLengthAscii(length, "null");
        }
        else
        {
            length = putJsonString(length, key);
        }
        length += line.putStringWithoutLengthAscii(length, ",\"timestamp\":");
        length += line.putLongAscii(length, record.timestamp());
        length += line.putStringWithoutLengthAscii(length, ",\"payload\":");
        if (record.payloadLength() == 0)
        {
            length += line.putStringWithoutLengthAscii(length, "null");
        }
        else
        {
            line.putBytes(length, record.buffer(), record.payloadOffset(), record.payloadLength());
            length += record.payloadLength();
        }
        line.putByte(length++, (byte)'}');
        line.putByte(length++, (byte)'\n');

        final ByteBuffer bytes = ByteBuffer.wrap(line.byteArray(), 0, length);
        while (bytes.hasRemaining())
        {
            channel.write(bytes);
        }
        controller.acknowledge(record.position());
    }

    private int putJsonString(final int offset, final String value)
    {
        int length = offset;
        line.putByte(length++, (byte)'"');
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
        line.putBytes(length, utf8);
        length += utf8.length;
        line.putByte(length++, (byte)'"');
        return length;
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
