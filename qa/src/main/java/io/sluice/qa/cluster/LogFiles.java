package io.sluice.qa.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/** Reading child logs for failure reports. */
final class LogFiles
{
    private LogFiles()
    {
    }

    static String read(final Path file)
    {
        try
        {
            return Files.exists(file) ? new String(Files.readAllBytes(file), StandardCharsets.UTF_8) : "";
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read " + file, ex);
        }
    }

    static String tail(final Path file, final int lines)
    {
        final String[] all = read(file).split("\\R");
        final int from = Math.max(0, all.length - lines);
        return String.join(System.lineSeparator(), Arrays.copyOfRange(all, from, all.length));
    }
}
