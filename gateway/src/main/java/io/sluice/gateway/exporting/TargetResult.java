package io.sluice.gateway.exporting;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.sluice.protocol.cluster.PartitionReplica;

/** The outcome of an operation on one (broker, partition) pair; {@code error} is null exactly when it succeeded. */
@JsonPropertyOrder({ "brokerId", "partitionId", "outcome", "error" })
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TargetResult(int brokerId, int partitionId, ExportingOutcome outcome, String error)
{
    public static TargetResult succeeded(final PartitionReplica replica)
    {
        return new TargetResult(replica.brokerId(), replica.partitionId(), ExportingOutcome.SUCCEEDED, null);
    }

    public static TargetResult failed(final PartitionReplica replica, final String error)
    {
        return new TargetResult(replica.brokerId(), replica.partitionId(), ExportingOutcome.FAILED, error);
    }

    public static TargetResult timedOut(final PartitionReplica replica, final String error)
    {
        return new TargetResult(replica.brokerId(), replica.partitionId(), ExportingOutcome.TIMED_OUT, error);
    }

    public PartitionReplica replica()
    {
        return new PartitionReplica(brokerId, partitionId);
    }
}
