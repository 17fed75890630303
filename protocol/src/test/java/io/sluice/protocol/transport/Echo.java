package io.sluice.protocol.transport;

/** Request handlers for tests. */
final class Echo
{
    /** Answers every request with a copy of its bytes. */
    static final RequestHandler HANDLER = (buffer, offset, length, response) ->
    {
        final byte[] copy = new byte[length];
        buffer.getBytes(offset, copy);
        response.respond(MessageWriter.of(new org.agrona.concurrent.UnsafeBuffer(copy), 0, length));
    };

    private Echo()
    {
    }
}
