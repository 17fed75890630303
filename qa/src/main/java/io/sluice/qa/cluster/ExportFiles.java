package io.sluice.qa.cluster;

import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads a file exporter's output, {@code <exportsDirectory>/partition-<id>.jsonl}, while the exporter may be
 * writing it: a last line without its newline (or that does not parse yet) is left out; a malformed line
 * before it is an error, since a finished line must be a whole record.
 * <p>
 * A view made by {@link #fromEnd} starts each file where it ended then: a test class on a shared cluster reads only
 * what was exported since it began, so the earlier classes' lines (and their backfills, out of order) are not its.
 */
public final class ExportFiles
{
    private final Path directory;
    /** Partition id to the byte offset each file is read from; a partition not in it is read from its start. */
    private final Map<Integer, Long> startOffsets;

    public ExportFiles(final Path directory)
    {
        this(directory, Map.of());
    }

    private ExportFiles(final Path directory, final Map<Integer, Long> startOffsets)
    {
        this.directory = directory;
        this.startOffsets = Map.copyOf(startOffsets);
    }

    /**
     * The same files read from their current end (after the last complete line) for partitions 1..{@code partitions}:
     * what is exported from now on.
     */
    public ExportFiles fromEnd(final int partitions)
    {
        final Map<Integer, Long> offsets = new TreeMap<>();
        for (int partitionId = 1; partitionId <= partitions; partitionId++)
        {
            final byte[] whole = whole().bytes(partitionId);
            int end = whole.length;
            while (end > 0 && whole[end - 1] != '\n')
            {
                end--;
            }
            offsets.put(partitionId, (long)end);
        }
        return new ExportFiles(directory, offsets);
    }

    /** The same files read from their start. */
    public ExportFiles whole()
    {
        return new ExportFiles(directory);
    }

    public Path directory()
    {
        return directory;
    }

    public Path file(final int partitionId)
    {
        return directory.resolve("partition-" + partitionId + ".jsonl");
    }

    /** The file's bytes from this view's start (empty when it does not exist yet), for comparing contents over time. */
    public byte[] bytes(final int partitionId)
    {
        final long start = startOffsets.getOrDefault(partitionId, 0L);
        try (FileChannel channel = FileChannel.open(file(partitionId), StandardOpenOption.READ))
        {
            final long size = channel.size();
            if (start > size)
            {
                throw new IllegalStateException(file(partitionId) + " shrank below " + start + " bytes, where this view began");
            }
            // only what this view shows: a shared cluster's files hold every earlier class's lines too
            final ByteBuffer buffer = ByteBuffer.allocate(Math.toIntExact(size - start));
            while (buffer.hasRemaining() && channel.read(buffer, start + buffer.position()) >= 0)
            {
                // until the size read above (the exporter may append meanwhile: that is for the next read)
            }
            buffer.flip();
            final byte[] bytes = new byte[buffer.remaining()];
            buffer.get(bytes);
            return bytes;
        }
        catch (final NoSuchFileException ex)
        {
            return new byte[0];
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read " + file(partitionId), ex);
        }
    }

    /** Every complete record of the partition's file, in file order (duplicates kept). */
    public List<ExportedRecord> records(final int partitionId)
    {
        final String text = new String(bytes(partitionId), StandardCharsets.UTF_8);
        final List<ExportedRecord> records = new ArrayList<>();
        int lineStart = 0;
        int lineNumber = 0;
        while (lineStart < text.length())
        {
            final int newline = text.indexOf('\n', lineStart);
            final boolean complete = newline >= 0;
            final String line = complete ? text.substring(lineStart, newline) : text.substring(lineStart);
            lineNumber++;
            lineStart = complete ? newline + 1 : text.length();
            if (line.isBlank())
            {
                continue;
            }
            try
            {
                final JsonNode json = Json.parse(line);
                records.add(new ExportedRecord(
                    json.path("partitionId").asInt(-1),
                    json.path("position").asLong(-1),
                    json.path("key").isNull() ? null : json.path("key").asString(null),
                    json.path("timestamp").asLong(-1),
                    json.has("payload") ? Json.write(json.get("payload")) : null));
            }
            catch (final RuntimeException ex)
            {
                if (!complete)
                {
                    break; // the exporter is still writing this line
                }
                throw new IllegalStateException(file(partitionId) + " line " + lineNumber + " is not a record: " +
                    Json.abbreviate(line), ex);
            }
        }
        return records;
    }
}
