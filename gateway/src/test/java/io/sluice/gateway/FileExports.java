package io.sluice.gateway;

import io.sluice.broker.exporter.ExporterConfig;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The file exporter {@code file} of a cluster test's brokers and what it wrote: one JSON line a record in
 * {@code <data>/exports/file/partition-<id>.jsonl}.
 */
public record FileExports(Path dataDir)
{
    public static final String EXPORTER_ID = "file";

    /** The brokers' exporters setting: one file exporter writing under the data directory. */
    public Map<String, ExporterConfig> exporters()
    {
        return Map.of(EXPORTER_ID, new ExporterConfig(EXPORTER_ID, "file", Map.of("path", directory().toString())));
    }

    public Path directory()
    {
        return dataDir.resolve("exports").resolve(EXPORTER_ID);
    }

    /** The exported line of the record at {@code position} of the partition, if it was exported. */
    public Optional<String> line(final int partitionId, final long position)
    {
        for (final String line : lines(partitionId))
        {
            if (!line.isBlank() && TestGateway.JSON.readTree(line).get("position").asLong() == position)
            {
                return Optional.of(line);
            }
        }
        return Optional.empty();
    }

    public boolean exported(final int partitionId, final long position)
    {
        return line(partitionId, position).isPresent();
    }

    /** Every position exported of the partition, once each. */
    public Set<Long> positions(final int partitionId)
    {
        final Set<Long> positions = new TreeSet<>();
        for (final String line : lines(partitionId))
        {
            if (!line.isBlank())
            {
                positions.add(TestGateway.JSON.readTree(line).get("position").asLong());
            }
        }
        return positions;
    }

    private java.util.List<String> lines(final int partitionId)
    {
        final Path file = directory().resolve("partition-" + partitionId + ".jsonl");
        try
        {
            return Files.exists(file) ? Files.readAllLines(file) : java.util.List.of();
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }
}
