package io.sluice.gateway.exporting;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.List;

/**
 * The exporting state of every pair as the brokers last reported it, and of the cluster as a whole:
 * the pairs' common state, or {@value #MIXED}. A pair whose broker is unreachable has role and state
 * {@value #UNKNOWN} and positions -1. A pair's {@code exportedPosition} is the lowest acknowledged position over the
 * partition's exporters (the same number the exporters view shows as {@code position}); {@code sentPosition}, on the
 * leader's pair only (null elsewhere: only the leader exports), the lowest position sent to their sinks, ahead of
 * {@code exportedPosition} while a soft pause holds acknowledgements back or a bulk is in flight. Times are ISO-8601 instants, null when not set: {@code pausedSince} while a pair
 * is held, {@code expiresAt} while its hold has a lease, {@code leaseExpiredAt} when a lease ended its last hold (the
 * event of the lease running out). For the cluster: the earliest {@code pausedSince} of a held pair, the latest
 * {@code expiresAt} (null when a held pair has no lease: then the hold has no end), the latest {@code leaseExpiredAt}
 * and the count of lease expiries.
 */
@JsonPropertyOrder({ "state", "pausedSince", "expiresAt", "leaseExpiredAt", "leaseExpiries", "targets" })
public record ExportingStatus(
    String state, String pausedSince, String expiresAt, String leaseExpiredAt, long leaseExpiries, List<PairStatus> targets)
{
    public static final String UNKNOWN = "UNKNOWN";
    public static final String MIXED = "MIXED";

    public ExportingStatus
    {
        targets = List.copyOf(targets);
    }

    /** Without times or lease expiries. */
    public ExportingStatus(final String state, final List<PairStatus> targets)
    {
        this(state, null, null, null, 0, targets);
    }

    @JsonPropertyOrder({ "brokerId", "partitionId", "role", "state", "exportedPosition", "sentPosition", "lastPosition",
        "pausedSince", "expiresAt", "leaseExpiredAt" })
    public record PairStatus(
        int brokerId, int partitionId, String role, String state, long exportedPosition, Long sentPosition,
        long lastPosition, String pausedSince, String expiresAt, String leaseExpiredAt)
    {
        /** Without times or a sent position (a follower's). */
        public PairStatus(
            final int brokerId, final int partitionId, final String role, final String state, final long exportedPosition,
            final long lastPosition)
        {
            this(brokerId, partitionId, role, state, exportedPosition, null, lastPosition, null, null, null);
        }
    }
}
