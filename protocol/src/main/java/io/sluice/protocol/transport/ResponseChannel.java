package io.sluice.protocol.transport;

/**
 * Where the answer to one request goes. Thread-safe; only the first response counts. If the
 * requesting connection is gone the response is dropped.
 */
public interface ResponseChannel
{
    void respond(MessageWriter response);
}
