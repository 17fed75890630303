package io.sluice.gateway.exporting;

import io.sluice.gateway.broker.AdminResult;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.cluster.ExportingHold;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.ExportingState;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every pair's exporting state as the status shows it: the polled topology, overlaid with the answers of this
 * gateway's own operations that no poll has caught up with yet, so the status reads its own writes (see
 * {@link ExportingControlService}). Thread-safe.
 */
final class ExportingStatusView
{
    private final ClusterTopology topology;
    /** Answers with the asked-for state that no poll has caught up with yet, keyed by pair. */
    private final ConcurrentHashMap<PartitionReplica, AdminResult> answered = new ConcurrentHashMap<>();

    ExportingStatusView(final ClusterTopology topology)
    {
        this.topology = topology;
    }

    /** Every pair's exporting state as its broker last reported it; never calls a broker. */
    ExportingStatus status()
    {
        final List<ExportingStatus.PairStatus> pairs = new ArrayList<>();
        String common = null;
        String pausedSince = null;
        String expiresAt = null;
        boolean heldForGood = false;
        String leaseExpiredAt = null;
        for (final PartitionReplica replica : topology.distribution().replicas())
        {
            // A broker whose control group replica has not caught up may report a state older than what was answered.
            final Optional<PartitionStatus> reported =
                topology.isReachable(replica.brokerId()) && topology.isControlCaughtUp(replica.brokerId()) ?
                    topology.status(replica) : Optional.empty();
            final ExportingStatus.PairStatus pair = reported
                .map(status -> pairStatus(replica, status))
                .orElseGet(() -> new ExportingStatus.PairStatus(
                    replica.brokerId(), replica.partitionId(), ExportingStatus.UNKNOWN, ExportingStatus.UNKNOWN, -1, -1));
            pairs.add(pair);
            common = common == null || common.equals(pair.state()) ? pair.state() : ExportingStatus.MIXED;
            // ISO-8601 instants in UTC order as text: the earliest start, the latest end.
            if (pair.pausedSince() != null && (pausedSince == null || Instant.parse(pair.pausedSince())
                .isBefore(Instant.parse(pausedSince))))
            {
                pausedSince = pair.pausedSince();
            }
            if (isHeld(pair.state()))
            {
                heldForGood |= pair.expiresAt() == null;
                if (pair.expiresAt() != null && (expiresAt == null || Instant.parse(pair.expiresAt())
                    .isAfter(Instant.parse(expiresAt))))
                {
                    expiresAt = pair.expiresAt();
                }
            }
            if (pair.leaseExpiredAt() != null && (leaseExpiredAt == null || Instant.parse(pair.leaseExpiredAt())
                .isAfter(Instant.parse(leaseExpiredAt))))
            {
                leaseExpiredAt = pair.leaseExpiredAt();
            }
        }
        return new ExportingStatus(common == null ? ExportingStatus.UNKNOWN : common, pausedSince,
            heldForGood ? null : expiresAt, leaseExpiredAt, topology.leaseExpiries(), pairs);
    }

    private static boolean isHeld(final String state)
    {
        return ExportingState.PAUSED.name().equals(state) || ExportingState.SOFT_PAUSED.name().equals(state);
    }

    /** Epoch micros as an ISO-8601 instant; null for 0 (not set). */
    static String instant(final long micros)
    {
        return micros <= 0 ? null : Instant.EPOCH.plusNanos(micros * 1000).toString();
    }

    /**
     * The polled pair, or the state a replica answered at a newer version than the poll saw, with positions no older
     * than that answer's (positions only move forward, so the higher of the two is the fresher).
     */
    private ExportingStatus.PairStatus pairStatus(
        final PartitionReplica replica, final PartitionStatus polled)
    {
        final AdminResult answer = answered.get(replica);
        if (answer != null && polled.exportingStateVersion() >= answer.version())
        {
            answered.remove(replica, answer); // the poll caught up: it is the fresher source again
        }
        final boolean answerIsFresher = answer != null && polled.exportingStateVersion() < answer.version();
        final String state = stateName(answerIsFresher ? answer.state() : polled.exportingState());
        final ExportingHold hold = answerIsFresher ? answer.hold() : polled.hold();
        final long acknowledged =
            answerIsFresher ? Math.max(polled.exportedPosition(), answer.exportedPosition()) : polled.exportedPosition();
        return new ExportingStatus.PairStatus(
            replica.brokerId(),
            replica.partitionId(),
            roleName(polled),
            state,
            acknowledged,
            // Only where exporters run (the leader); never behind what was acknowledged.
            polled.sentPosition() < 0 ? null : Math.max(acknowledged, polled.sentPosition()),
            answerIsFresher ? Math.max(polled.lastPosition(), answer.lastPosition()) : polled.lastPosition(),
            isHeld(state) ? instant(hold.sinceMicros()) : null,
            isHeld(state) ? instant(hold.expiresAtMicros()) : null,
            instant(hold.expiredAtMicros()));
    }

    /** Folds a successful answer into the view, keeping per pair only the newest version answered. */
    void remember(final AdminResult answer)
    {
        answered.merge(answer.replica(), answer, (held, fresh) -> fresh.version() >= held.version() ? fresh : held);
    }

    private static String roleName(final PartitionStatus status)
    {
        if (status.role() == null)
        {
            return ExportingStatus.UNKNOWN;
        }
        return switch (status.role())
        {
            case LEADER, FOLLOWER, CANDIDATE, INACTIVE -> status.role().name();
            default -> ExportingStatus.UNKNOWN;
        };
    }

    static String stateName(final ExportingState state)
    {
        if (state == null)
        {
            return ExportingStatus.UNKNOWN;
        }
        return switch (state)
        {
            case EXPORTING, PAUSED, SOFT_PAUSED -> state.name();
            default -> ExportingStatus.UNKNOWN;
        };
    }
}
