package io.sluice.protocol.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import io.sluice.protocol.tls.TlsModeProbe;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;

import java.util.List;

import static io.sluice.protocol.transport.FrameDescriptor.CORRELATION_ID_LENGTH;
import static io.sluice.protocol.transport.FrameDescriptor.FRAME_LENGTH_FIELD_LENGTH;
import static io.sluice.protocol.transport.FrameDescriptor.MIN_FRAME_LENGTH;

/**
 * Splits the inbound stream into frames and hands each message to {@link #onMessage} as a reused
 * view over the cumulation buffer: no slice, no copy, no allocation per frame. A length field that
 * is negative, below {@link FrameDescriptor#MIN_FRAME_LENGTH} or above the maximum is a protocol
 * violation: the decoder throws, and the connection's handler closes it. So is a TLS handshake where the first
 * frame should be (a peer with cluster TLS on talking to a port without), with a message that says so.
 */
abstract class FrameDecoder extends ByteToMessageDecoder
{
    private static final ByteBuf PROBE_MARKER = Unpooled.unreleasableBuffer(
        Unpooled.copiedBuffer(TlsModeProbe.PROBE_SERVER_NAME, StandardCharsets.US_ASCII));

    private final int maxFrameLength;
    private final UnsafeBuffer view = new UnsafeBuffer(Frames.EMPTY);
    private boolean firstFrame = true;

    FrameDecoder(final int maxFrameLength)
    {
        this.maxFrameLength = maxFrameLength;
    }

    @Override
    protected final void decode(final ChannelHandlerContext ctx, final ByteBuf in, final List<Object> out)
    {
        while (in.readableBytes() >= FRAME_LENGTH_FIELD_LENGTH && ctx.channel().isActive())
        {
            final int start = in.readerIndex();
            final int frameLength = in.getIntLE(start);
            if (firstFrame && in.readableBytes() >= 3 && looksLikeTlsHandshake(in, start))
            {
                if (isModeProbe(in, start))
                {
                    // A peer starting up, checking that this port speaks its mode: it does not, which it wanted to know.
                    in.skipBytes(in.readableBytes());
                    ctx.close();
                    return;
                }
                in.skipBytes(in.readableBytes());
                throw new CorruptedFrameException("the peer opened a TLS handshake, but this connection has no TLS " +
                    "(is sluice.cluster.tls.enabled the same on every broker and gateway?)");
            }
            if (frameLength < MIN_FRAME_LENGTH)
            {
                in.skipBytes(in.readableBytes());
                throw new CorruptedFrameException("frame length " + frameLength + " below the minimum " +
                    MIN_FRAME_LENGTH);
            }
            if (frameLength > maxFrameLength)
            {
                in.skipBytes(in.readableBytes());
                throw new TooLongFrameException("frame length " + frameLength + " exceeds maxFrameLength " +
                    maxFrameLength);
            }
            if (in.readableBytes() < FRAME_LENGTH_FIELD_LENGTH + frameLength)
            {
                return;
            }
            firstFrame = false;
            final int correlationIdIndex = start + FRAME_LENGTH_FIELD_LENGTH;
            final long correlationId = in.getLongLE(correlationIdIndex);
            final int messageIndex = correlationIdIndex + CORRELATION_ID_LENGTH;
            final int messageLength = FrameDescriptor.messageLength(frameLength);
            in.readerIndex(start + FRAME_LENGTH_FIELD_LENGTH + frameLength);
            Frames.wrap(view, in, messageIndex, messageLength);
            try
            {
                onMessage(ctx, correlationId, in, messageIndex, view, messageLength);
            }
            finally
            {
                view.wrap(Frames.EMPTY);
            }
        }
    }

    /**
     * A TLS record header of a handshake (content type 22, protocol version 3.1 to 3.4) where the connection's
     * first frame starts: a frame length of that shape (66,326 bytes and more, in narrow steps) as a first frame
     * is far less likely than a peer configured for TLS.
     */
    private static boolean looksLikeTlsHandshake(final ByteBuf in, final int start)
    {
        final byte minor = in.getByte(start + 2);
        return in.getByte(start) == 0x16 && in.getByte(start + 1) == 0x03 && minor >= 0x01 && minor <= 0x04;
    }

    /** The ClientHello of {@link TlsModeProbe}: it names {@link TlsModeProbe#PROBE_SERVER_NAME} as the server. */
    private static boolean isModeProbe(final ByteBuf in, final int start)
    {
        return ByteBufUtil.indexOf(PROBE_MARKER, in.slice(start, in.writerIndex() - start)) >= 0;
    }

    /**
     * One message: {@code length} bytes at {@code index} of {@code frames}, also wrapped by {@code message} from
     * offset 0. Both are valid only during the call.
     */
    protected abstract void onMessage(
        ChannelHandlerContext ctx, long correlationId, ByteBuf frames, int index, UnsafeBuffer message, int length);
}
