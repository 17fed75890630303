package io.sluice.broker.raft;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/** How a state machine's snapshot file is written: whole or not at all. */
public final class SnapshotFile
{
    private SnapshotFile()
    {
    }

    /** Writes {@code bytes} beside {@code file} first, forces them to disk, then moves them over {@code file}. */
    public static void write(final Path file, final byte[] bytes) throws IOException
    {
        write(file, ByteBuffer.wrap(bytes));
    }

    /** As {@link #write(Path, byte[])}, with the bytes {@code content} has remaining (they are not copied first). */
    public static void write(final Path file, final ByteBuffer content) throws IOException
    {
        final Path tmp = file.resolveSibling(file.getFileName() + ".writing");
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING))
        {
            while (content.hasRemaining())
            {
                channel.write(content);
            }
            channel.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
