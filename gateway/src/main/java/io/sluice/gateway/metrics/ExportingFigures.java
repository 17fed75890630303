package io.sluice.gateway.metrics;

import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.ExportingState;

import java.util.Optional;
import java.util.OptionalInt;

/**
 * The exporting figures read from the topology, as gauges want them: NaN when the figure is unknown, so a
 * scrape shows a gap rather than a made-up number.
 */
public final class ExportingFigures
{
    /** The values of the {@code state} label; UNKNOWN when the pair's broker is unreachable or unreported. */
    public static final String[] STATES = {"EXPORTING", "PAUSED", "SOFT_PAUSED", "UNKNOWN"};

    private ExportingFigures()
    {
    }

    /** The name of the pair's current state, one of {@link #STATES}. */
    public static String stateOf(final ClusterTopology topology, final PartitionReplica replica)
    {
        final Optional<PartitionStatus> status =
            topology.isReachable(replica.brokerId()) ? topology.status(replica) : Optional.empty();
        if (status.isEmpty())
        {
            return "UNKNOWN";
        }
        final ExportingState state = status.get().exportingState();
        if (state == null)
        {
            return "UNKNOWN";
        }
        return switch (state)
        {
            case EXPORTING, PAUSED, SOFT_PAUSED -> state.name();
            default -> "UNKNOWN";
        };
    }

    /** 1 when the pair is in the named state, else 0: exactly one state of a pair is 1. */
    public static double stateValue(final ClusterTopology topology, final PartitionReplica replica, final String state)
    {
        return state.equals(stateOf(topology, replica)) ? 1 : 0;
    }

    /** The partition's status as its leader reported it, empty if no leader is known or reachable. */
    public static Optional<PartitionStatus> leaderStatus(final ClusterTopology topology, final int partitionId)
    {
        final OptionalInt leader = topology.leaderOf(partitionId);
        if (leader.isEmpty() || !topology.isReachable(leader.getAsInt()))
        {
            return Optional.empty();
        }
        return topology.status(new PartitionReplica(leader.getAsInt(), partitionId));
    }

    /** The exporter's acknowledged position on the partition as the leader reports it, NaN when unknown. */
    public static double exporterPosition(final ClusterTopology topology, final int partitionId, final String exporterId)
    {
        final Optional<PartitionStatus> status = leaderStatus(topology, partitionId);
        if (status.isEmpty() || status.get().exporterPositions() == null)
        {
            return Double.NaN;
        }
        final Long position = status.get().exporterPositions().get(exporterId);
        return position == null || position < 0 ? Double.NaN : position;
    }

    /**
     * Records the exporter is behind on the partition: the leader's last position minus the exporter's
     * acknowledged position, both from the leader's one report so they are consistent; NaN when unknown.
     */
    public static double lag(final ClusterTopology topology, final int partitionId, final String exporterId)
    {
        final Optional<PartitionStatus> status = leaderStatus(topology, partitionId);
        if (status.isEmpty() || status.get().exporterPositions() == null || status.get().lastPosition() < 0)
        {
            return Double.NaN;
        }
        final Long position = status.get().exporterPositions().get(exporterId);
        if (position == null || position < 0)
        {
            return Double.NaN;
        }
        return Math.max(0, status.get().lastPosition() - position);
    }
}
