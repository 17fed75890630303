package io.sluice.broker.partition;

import io.sluice.protocol.codecs.ErrorCode;

/** A request on a partition failed for a reason the caller can act on; carries the wire error code. */
public final class PartitionException extends RuntimeException
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

    public ErrorCode code()
    {
        return code;
    }

    public int partitionId()
    {
        return partitionId;
    }

    /** With {@link ErrorCode#NOT_LEADER}: the leader this broker knows, or -1. */
    public int leaderId()
    {
        return leaderId;
    }
}
