package io.sluice.gateway.rebalance;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.sluice.gateway.exporting.ExportingOutcome;

import java.util.List;

/**
 * The answer to {@code POST /actuator/rebalance}: one entry per partition, in partition order. A partition
 * SUCCEEDED when its leader is its preferred broker after the call.
 */
@JsonPropertyOrder({ "operation", "result", "partitions" })
public record RebalanceResult(String operation, ExportingOutcome result, List<PartitionResult> partitions)
{
    public static final String OPERATION = "REBALANCE";

    public RebalanceResult
    {
        partitions = List.copyOf(partitions);
    }

    /** {@code leaderId} is -1 when no leader is known; {@code error} is null exactly when the outcome is SUCCEEDED. */
    @JsonPropertyOrder({ "partitionId", "preferredBrokerId", "leaderId", "outcome", "error" })
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record PartitionResult(int partitionId, int preferredBrokerId, int leaderId, ExportingOutcome outcome, String error)
    {
    }
}
