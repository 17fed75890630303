package io.sluice.broker;

import io.sluice.protocol.cluster.InvalidClusterConfigException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The version of a broker's data directory, in its {@value #FILE} file. A directory of another version is refused
 * before anything reads it: version 2 moved the exporting state out of the partitions' logs into the cluster control
 * group (issue 15), version 3 replaced the append entries and the record log's frames so that records are copied
 * once (issue 11), version 4 wrote a snapshot's remembered append ids as an SBE message instead of a layout of its
 * own (and lifted their 16 MiB bound), and this broker cannot read what an earlier one wrote. A directory without
 * Raft data is new and gets the current version.
 */
final class DataLayout
{
    static final String FILE = "LAYOUT";
    static final int CURRENT = 4;
    private static final String PREFIX = "sluice data layout ";

    private DataLayout()
    {
    }

    /**
     * Creates {@code brokerDir} with the current version when it holds no Raft data, else checks its version.
     *
     * @throws InvalidClusterConfigException naming {@code sluice.data-dir} when the directory is of another version.
     */
    static void check(final Path brokerDir)
    {
        final Path file = brokerDir.resolve(FILE);
        try
        {
            if (!Files.exists(file))
            {
                if (Files.isDirectory(brokerDir.resolve("raft")))
                {
                    throw refused(brokerDir, "has no " + FILE + " file: it was written by a Sluice version before the " +
                        "cluster control group (version 1), which kept the exporting state in the partitions");
                }
                Files.createDirectories(brokerDir);
                Files.writeString(file, PREFIX + CURRENT + "\n", StandardCharsets.US_ASCII);
                return;
            }
            final String content = Files.readString(file, StandardCharsets.US_ASCII).trim();
            final int version;
            try
            {
                version = content.startsWith(PREFIX) ? Integer.parseInt(content.substring(PREFIX.length())) : -1;
            }
            catch (final NumberFormatException e)
            {
                throw refused(brokerDir, "has an unreadable " + FILE + " file ('" + content + "')");
            }
            if (version != CURRENT)
            {
                throw refused(brokerDir, version < 0 ? "has an unreadable " + FILE + " file ('" + content + "')" :
                    "is of data layout version " + version + ", and this broker reads version " + CURRENT);
            }
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException("cannot read or create the data directory " + brokerDir + ": " + e.getMessage(), e);
        }
    }

    private static InvalidClusterConfigException refused(final Path brokerDir, final String why)
    {
        return new InvalidClusterConfigException("sluice.data-dir", brokerDir + " " + why + "; start this broker on " +
            "an empty data directory (move the old one away)");
    }
}
