package io.sluice.broker.errors;

import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.message.CodedFailure;

/** A request on a partition failed for a reason the caller can act on; carries the wire error code. */
public final class PartitionException extends RuntimeException implements CodedFailure
{
    private final ErrorCode code;
    private final int partitionId;
    private final int leaderId;

    public PartitionException(final ErrorCode code, final int partitionId, final int leaderId, final String message)
    {
        super(message);
        this.code = code;
        this.partitionId = partitionId;
        this.leaderId = leaderId;
    }

    @Override
    public ErrorCode code()
    {
        return code;
    }

    public int partitionId()
    {
        return partitionId;
    }

    /** With {@link ErrorCode#NOT_LEADER}: the leader this broker knows, or -1. */
    @Override
    public int leaderId()
    {
        return leaderId;
    }
}
