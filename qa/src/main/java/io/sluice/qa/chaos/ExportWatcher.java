package io.sluice.qa.chaos;

import io.sluice.qa.cluster.Json;
import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

/**
 * Tails the file exporter's {@code partition-<id>.jsonl} files (CONTRACT §4) and records each new complete line as an
 * {@link Export} with the window it arrived in: after the start of the last read that lacked it, at or before the end
 * of the read that found it. The workload's records carry their write id as the payload's {@code w}.
 */
public final class ExportWatcher
{
    private final Path directory;
    private final int partitions;
    private final HistoryRecorder recorder;
    private final Map<Integer, Long> offsets = new HashMap<>();
    private final Map<Integer, Integer> lines = new HashMap<>();
    /** Per partition, the start of the last read that ended on a line's end. */
    private final Map<Integer, Long> lastReadStart = new HashMap<>();

    public ExportWatcher(final Path directory, final int partitions, final HistoryRecorder recorder)
    {
        this.directory = directory;
        this.partitions = partitions;
        this.recorder = recorder;
    }

    /** Reads every file once; returns how many new lines it found. Called from one thread. */
    public int poll()
    {
        int found = 0;
        for (int partitionId = 1; partitionId <= partitions; partitionId++)
        {
            final long start = recorder.now();
            final String text = readFrom(partitionId, offsets.getOrDefault(partitionId, 0L));
            final long end = recorder.now();
            // a read that ended inside a line saw it being written: the lines after it may date from before that read
            final long absentAt = lastReadStart.getOrDefault(partitionId, 0L);
            int consumed = 0;
            int newline;
            while ((newline = text.indexOf('\n', consumed)) >= 0)
            {
                final String line = text.substring(consumed, newline);
                consumed = newline + 1;
                if (line.isBlank())
                {
                    continue;
                }
                final JsonNode json = Json.parse(line);
                final JsonNode w = json.path("payload").path("w");
                recorder.exported(new Export(partitionId, json.path("position").asLong(-1),
                    w.isString() ? w.asString() : null, lines.merge(partitionId, 1, Integer::sum), absentAt, end));
                found++;
            }
            if (consumed == text.length())
            {
                lastReadStart.put(partitionId, start);
            }
            offsets.merge(partitionId, (long)text.substring(0, consumed).getBytes(StandardCharsets.UTF_8).length, Long::sum);
        }
        return found;
    }

    private String readFrom(final int partitionId, final long offset)
    {
        final Path file = directory.resolve("partition-" + partitionId + ".jsonl");
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            final long size = channel.size();
            final ByteBuffer buffer = ByteBuffer.allocate(Math.toIntExact(Math.max(0, size - offset)));
            while (buffer.hasRemaining() && channel.read(buffer, offset + buffer.position()) >= 0)
            {
                // up to the size seen at the start
            }
            return new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8);
        }
        catch (final NoSuchFileException ex)
        {
            return "";
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read " + file, ex);
        }
    }
}
