package io.sluice.broker.exporter;

import io.sluice.exporter.spi.CommittedRecord;
import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterController;
import io.sluice.exporter.spi.ExporterSettings;
import io.sluice.exporter.spi.RecordJson;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes records as JSON lines ({@link RecordJson}) to {@code <path>/partition-<id>.jsonl}, one record a line.
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

    private final LineBuffer line = new LineBuffer();
    private Path file;
    private FileChannel channel;
    private ExporterController controller;
    private int partitionId;

    @Override
    public void configure(final ExporterContext context)
    {
        final ExporterSettings settings = context.settings();
        settings.requireOnly(java.util.List.of(PATH_PROPERTY), java.util.List.of(), "a file exporter");
        final String path = settings.text(PATH_PROPERTY);
        final Path directory = path == null ?
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
        line.reset();
        RecordJson.write(record, line);
        line.write('\n');

        final ByteBuffer bytes = ByteBuffer.wrap(line.bytes(), 0, line.size());
        while (bytes.hasRemaining())
        {
            channel.write(bytes);
        }
        controller.acknowledge(record.position());
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
