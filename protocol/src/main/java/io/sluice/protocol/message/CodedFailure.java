package io.sluice.protocol.message;

import io.sluice.protocol.codecs.ErrorCode;

/**
 * A failure that carries the wire error code it is answered with, so a layer that only relays it (a command handler
 * proposing through a partition it does not know) answers with the same code and leader instead of a generic one.
 */
public interface CodedFailure
{
    ErrorCode code();

    /** With {@link ErrorCode#NOT_LEADER}: the leader the failing broker knows, or -1. */
    int leaderId();
}
