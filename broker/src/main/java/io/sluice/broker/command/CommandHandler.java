package io.sluice.broker.command;

import io.sluice.protocol.transport.ResponseChannel;
import org.agrona.DirectBuffer;

/**
 * The handling of one request kind: decodes the request (with decoders of its own for each I/O thread), checks it,
 * calls the broker and answers exactly once. {@link CommandApi} dispatches to it by the message's template id; a
 * handler may throw only what a lying length makes a generated decoder throw, which the dispatcher answers.
 */
interface CommandHandler
{
    /** The SBE template id of the requests this handles. */
    int templateId();

    /**
     * Handles one request.
     *
     * @param message     the whole message, its header at 0, bounded by the frame.
     * @param bodyOffset  where the body starts (after the message header).
     * @param blockLength the header's block length.
     * @param version     the header's schema version.
     */
    void onRequest(DirectBuffer message, int bodyOffset, int blockLength, int version, ResponseChannel response);
}
