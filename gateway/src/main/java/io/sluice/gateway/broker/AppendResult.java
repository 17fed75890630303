package io.sluice.gateway.broker;

/** A committed batch occupies the dense positions {@code firstPosition .. firstPosition + count - 1}. */
public record AppendResult(int partitionId, long firstPosition, int count)
{
}
