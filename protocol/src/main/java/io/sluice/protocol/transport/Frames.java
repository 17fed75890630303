package io.sluice.protocol.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.FastThreadLocal;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteOrder;

import static io.sluice.protocol.transport.FrameDescriptor.CORRELATION_ID_OFFSET;
import static io.sluice.protocol.transport.FrameDescriptor.FRAME_LENGTH_OFFSET;
import static io.sluice.protocol.transport.FrameDescriptor.HEADER_LENGTH;
import static io.sluice.protocol.transport.FrameDescriptor.MESSAGE_OFFSET;

/** Encodes frames straight into pooled Netty buffers through a per-thread reusable Agrona view. */
final class Frames
{
    static final byte[] EMPTY = new byte[0];

    private static final FastThreadLocal<UnsafeBuffer> VIEW = new FastThreadLocal<>()
    {
        protected UnsafeBuffer initialValue()
        {
            return new UnsafeBuffer(Frames.EMPTY);
        }
    };

    private Frames()
    {
    }

    /**
     * Allocates a frame of exactly the writer's length and encodes the header and message into it.
     * The caller owns the returned buffer. Fails (and releases) if the writer writes out of bounds.
     */
    static ByteBuf encode(
        final ByteBufAllocator allocator, final long correlationId, final MessageWriter writer, final int messageLength)
    {
        final int frameSize = HEADER_LENGTH + messageLength;
        final ByteBuf buf = allocator.directBuffer(frameSize, frameSize);
        try
        {
            final UnsafeBuffer view = VIEW.get();
            wrap(view, buf, 0, frameSize);
            view.putInt(FRAME_LENGTH_OFFSET, FrameDescriptor.frameLength(messageLength), ByteOrder.LITTLE_ENDIAN);
            view.putLong(CORRELATION_ID_OFFSET, correlationId, ByteOrder.LITTLE_ENDIAN);
            writer.write(view, MESSAGE_OFFSET);
            view.wrap(Frames.EMPTY);
            buf.writerIndex(frameSize);
            return buf;
        }
        catch (final RuntimeException | Error e)
        {
            buf.release();
            throw e;
        }
    }

    /** Points {@code view} at {@code length} bytes of {@code buf} from absolute {@code index}. */
    static void wrap(final UnsafeBuffer view, final ByteBuf buf, final int index, final int length)
    {
        if (buf.hasMemoryAddress())
        {
            view.wrap(buf.memoryAddress() + index, length);
        }
        else if (buf.hasArray())
        {
            view.wrap(buf.array(), buf.arrayOffset() + index, length);
        }
        else
        {
            view.wrap(buf.nioBuffer(index, length), 0, length);
        }
    }
}
