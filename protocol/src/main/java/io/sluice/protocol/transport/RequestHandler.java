package io.sluice.protocol.transport;

import org.agrona.DirectBuffer;

/**
 * Serves requests arriving at a {@link TransportServer}.
 * <p>
 * Called on a transport I/O thread: it must not block. The request bytes are valid only for the
 * duration of the call; copy what must outlive it. Answer exactly once through the channel, from any
 * thread, now or later.
 */
@FunctionalInterface
public interface RequestHandler
{
    void onRequest(DirectBuffer buffer, int offset, int length, ResponseChannel response);
}
