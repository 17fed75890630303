package io.sluice.broker.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * How the record log gets the disk space of a segment before it writes there through a memory mapping, and what it
 * does when the disk has none.
 * <p>
 * A page of a sparse mapped file that the file system cannot back raises {@code SIGBUS} on the write, which the JVM
 * cannot always turn into an exception (it killed brokers inside a CRC32C intrinsic). So every byte is reserved on
 * disk by {@link #reserve} before it is mapped: a full disk then surfaces as an {@code IOException} from a plain
 * {@code write(2)}, where nothing has been written into the mapping yet.
 */
public interface SegmentSpace
{
    /** Largest run of zeros written by one call of {@link #zeros}: the file grows in steps no larger. */
    int ZERO_BLOCK_BYTES = 1024 * 1024;

    /** Makes bytes {@code [from, to)} of the file real blocks on disk (not a hole); fails with ENOSPC's IOException. */
    void reserve(FileChannel channel, long from, long to) throws IOException;

    /**
     * Reserving room in {@code file} failed with {@code cause}: returns how many milliseconds the append waits before
     * it tries again (the log's lock released meanwhile, so readers go on), or a negative number to fail the append
     * with {@code cause}. Called on the appending thread.
     */
    long onNoSpace(Path file, IOException cause);

    /** Reserving room succeeded again after {@link #onNoSpace} was called. */
    void onSpaceBack(Path file);

    /** Zeros written with {@code write(2)}, and an append that finds no space fails at once: for tools and tests. */
    static SegmentSpace zerosFailingFast()
    {
        return new SegmentSpace()
        {
            @Override
            public void reserve(final FileChannel channel, final long from, final long to) throws IOException
            {
                zeros(channel, from, to);
            }

            @Override
            public long onNoSpace(final Path file, final IOException cause)
            {
                return -1;
            }

            @Override
            public void onSpaceBack(final Path file)
            {
            }
        };
    }

    /**
     * Writes zeros over {@code [from, to)} of the file; on failure cuts the file back to {@code from}, so a partial
     * reservation leaves nothing behind (and gives back what it took).
     */
    static void zeros(final FileChannel channel, final long from, final long to) throws IOException
    {
        final ByteBuffer zeros = ZeroBlock.BLOCK.duplicate();
        long at = from;
        try
        {
            while (at < to)
            {
                zeros.clear().limit((int)Math.min(ZERO_BLOCK_BYTES, to - at));
                while (zeros.hasRemaining())
                {
                    at += channel.write(zeros, at);
                }
            }
        }
        catch (final IOException e)
        {
            try
            {
                channel.truncate(from);
            }
            catch (final IOException suppressed)
            {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** One shared block of zeros (never written to: every user takes a duplicate). */
    final class ZeroBlock
    {
        static final ByteBuffer BLOCK = ByteBuffer.allocateDirect(ZERO_BLOCK_BYTES);

        private ZeroBlock()
        {
        }
    }
}
