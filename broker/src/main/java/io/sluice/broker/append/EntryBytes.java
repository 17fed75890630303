package io.sluice.broker.append;

import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * The bytes of one applied Raft entry as Ratis hands them over: one buffer (a follower's entry, a replay), or the
 * pieces of a rope (the leader applies the entry it proposed, which {@link AppendEntries} built over its batches'
 * arrays). {@link #view} gives a contiguous view of a range without copying when the range lies in one piece, which
 * holds for every range the apply asks for in an entry this broker proposed: a rope's pieces split it only between
 * batches. A range across pieces (an entry split elsewhere, which no code here produces) is copied into the caller's
 * scratch buffer and counted in {@link #gatheredBytes}.
 * <p>
 * Not thread-safe: one per partition state, on the apply thread (its two counters may be read from any thread). The
 * views reach into Ratis's buffers and must not be used after the apply of their entry ({@link #release}).
 */
public final class EntryBytes
{
    private UnsafeBuffer[] pieces = {new UnsafeBuffer(0, 0)};
    /** Offset in the entry of each piece's first byte; one more than the pieces: the entry's length last. */
    private int[] starts = new int[2];
    private int pieceCount;
    /** Written by the apply thread only, read by any (diagnostics): volatile, one writer. */
    private volatile long gatheredBytes;
    private volatile long entriesInPieces;

    /** The entry in pieces, in order (each ByteBuffer's remaining bytes); the buffers are read, never moved. */
    public EntryBytes wrap(final List<ByteBuffer> buffers)
    {
        ensurePieces(buffers.size());
        int length = 0;
        for (int i = 0; i < buffers.size(); i++)
        {
            final ByteBuffer buffer = buffers.get(i);
            pieces[i].wrap(buffer, buffer.position(), buffer.remaining());
            starts[i] = length;
            length += buffer.remaining();
        }
        pieceCount = buffers.size();
        starts[pieceCount] = length;
        if (pieceCount > 1)
        {
            entriesInPieces++;
        }
        return this;
    }

    /** The entry in one buffer. */
    public EntryBytes wrap(final DirectBuffer buffer)
    {
        ensurePieces(1);
        pieces[0].wrap(buffer, 0, buffer.capacity());
        starts[0] = 0;
        starts[1] = buffer.capacity();
        pieceCount = 1;
        return this;
    }

    public int length()
    {
        return starts[pieceCount];
    }

    /** How many pieces the entry came in. */
    public int pieceCount()
    {
        return pieceCount;
    }

    /**
     * Points {@code into} at the entry's bytes {@code [offset, offset + length)} and returns it: a view of the piece
     * that holds them, or, when they cross pieces, of {@code scratch} after copying them there.
     *
     * @throws IOException when the range runs past the entry.
     */
    public DirectBuffer view(final UnsafeBuffer into, final int offset, final int length, final ExpandableArrayBuffer scratch)
        throws IOException
    {
        if (offset < 0 || length < 0 || (long)offset + length > length())
        {
            throw new IOException("entry of " + length() + " bytes has no range of " + length + " bytes at " + offset);
        }
        int piece = pieceOf(offset);
        final int inPiece = offset - starts[piece];
        if (inPiece + length <= starts[piece + 1] - starts[piece])
        {
            into.wrap(pieces[piece], inPiece, length);
            return into;
        }
        scratch.checkLimit(length);
        int copied = 0;
        int from = inPiece;
        while (copied < length)
        {
            final int chunk = Math.min(length - copied, starts[piece + 1] - starts[piece] - from);
            scratch.putBytes(copied, pieces[piece], from, chunk);
            copied += chunk;
            piece++;
            from = 0;
        }
        gatheredBytes += length;
        into.wrap(scratch, 0, length);
        return into;
    }

    /** Bytes copied so far because a range crossed pieces: 0 for every entry this broker proposes. */
    public long gatheredBytes()
    {
        return gatheredBytes;
    }

    /** Entries wrapped so far that came in more than one piece. */
    public long entriesInPieces()
    {
        return entriesInPieces;
    }

    /** Lets go of the entry's buffers. */
    public void release()
    {
        for (int i = 0; i < pieceCount; i++)
        {
            pieces[i].wrap(0, 0);
        }
        pieceCount = 0;
        starts[0] = 0;
    }

    /** The piece holding the entry's byte at {@code offset} (below its length): the last piece starting at or before it. */
    private int pieceOf(final int offset)
    {
        int low = 0;
        int high = pieceCount - 1;
        while (low < high)
        {
            final int middle = (low + high + 1) >>> 1;
            if (starts[middle] <= offset)
            {
                low = middle;
            }
            else
            {
                high = middle - 1;
            }
        }
        return low;
    }

    private void ensurePieces(final int count)
    {
        if (pieces.length < count)
        {
            final UnsafeBuffer[] grown = new UnsafeBuffer[Math.max(count, 2 * pieces.length)];
            System.arraycopy(pieces, 0, grown, 0, pieces.length);
            for (int i = pieces.length; i < grown.length; i++)
            {
                grown[i] = new UnsafeBuffer(0, 0);
            }
            pieces = grown;
            starts = new int[grown.length + 1];
        }
    }
}
