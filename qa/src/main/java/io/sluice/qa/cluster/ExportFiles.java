package io.sluice.qa.cluster;

import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a file exporter's output, {@code <exportsDirectory>/partition-<id>.jsonl}, while the exporter may be
 * writing it: a last line without its newline (or that does not parse yet) is left out; a malformed line
 * before it is an error, since a finished line must be a whole record.
 */
public final class ExportFiles
{
    private final Path directory;

    public ExportFiles(final Path directory)
    {
        this.directory = directory;
    }

    public Path directory()
    {
        return directory;
    }

    public Path file(final int partitionId)
    {
        return directory.resolve("partition-" + partitionId + ".jsonl");
    }

    /** The file's bytes (empty when it does not exist yet), for comparing contents over time. */
    public byte[] bytes(final int partitionId)
    {
        try
        {
            return Files.readAllBytes(file(partitionId));
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
