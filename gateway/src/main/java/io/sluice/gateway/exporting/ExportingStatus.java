package io.sluice.gateway.exporting;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.List;

/**
 * The exporting state of every pair as the brokers last reported it, and of the cluster as a whole:
 * the pairs' common state, or {@value #MIXED}. A pair whose broker is unreachable has role and state
 * {@value #UNKNOWN} and positions -1.
 */
@JsonPropertyOrder({ "state", "targets" })
public record ExportingStatus(String state, List<PairStatus> targets)
{
    public static final String UNKNOWN = "UNKNOWN";
    public static final String MIXED = "MIXED";

    public ExportingStatus
    {
        targets = List.copyOf(targets);
    }

    @JsonPropertyOrder({ "brokerId", "partitionId", "role", "state", "exportedPosition", "lastPosition" })
    public record PairStatus(
        int brokerId, int partitionId, String role, String state, long exportedPosition, long lastPosition)
    {
    }
}
