package io.sluice.gateway.exporting;

import io.sluice.gateway.broker.AdminOperation;
import io.sluice.gateway.broker.AdminResult;
import io.sluice.gateway.broker.BrokerClient;
import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.gateway.broker.BrokerFailure;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.concurrent.Futures;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Pauses, soft-pauses and resumes exporting on (broker, partition) pairs, and reports their state.
 * <p>
 * An operation validates its targets before anything is sent, picks one version for all of them (the
 * latest version wins on every replica), and sends one admin request per pair at once, each with the
 * request timeout; pairs of a broker the topology knows to be unreachable fail at once. A pair succeeded
 * only if its replica answered holding the asked-for state, durably. The answer lists every pair with its
 * outcome; the operation never completes exceptionally.
 * <p>
 * The status reads its own writes: every answer a replica gave with the asked-for state is folded into the
 * view before the operation completes, and wins over the polled state until a poll reports that version or a
 * newer one; so right after an answered pause, a pair it reported SUCCEEDED shows PAUSED, and an older poll
 * still in flight cannot bring back the state before. A broker that is unreachable stays UNKNOWN. Thread-safe.
 */
@Service
public class ExportingControlService
{
    private static final Logger LOG = LoggerFactory.getLogger(ExportingControlService.class);
    private static final int MAX_LOGGED_FAILURES = 8;

    /** Lets the broker client's own deadline win, so its message is the one reported. */
    private static final Duration DEADLINE_GRACE = Duration.ofMillis(250);

    private final BrokerClient brokerClient;
    private final ClusterTopology topology;
    private final Duration requestTimeout;
    private final ExportingVersionSequence versions;
    private final ExportingOperationListener listener;
    /** {@code sluice.exporting.max-pause}: the longest lease, and the lease of a pause that names none; null: no cap. */
    private volatile Duration maxPause;
    private final ExportingStatusView statusView;

    @Autowired
    public ExportingControlService(
        final BrokerClient brokerClient,
        final ClusterTopology topology,
        @Value("${sluice.gateway.request-timeout:5s}") final Duration requestTimeout,
        final ObjectProvider<Clock> clock,
        final ObjectProvider<ExportingOperationListener> listener,
        @Value("${" + MAX_PAUSE_SETTING + ":}") final String maxPause)
    {
        this(brokerClient, topology, requestTimeout, clock.getIfAvailable(Clock::systemUTC),
            listener.getIfAvailable(() -> ExportingOperationListener.NONE));
        maxPause(maxPause == null || maxPause.isBlank() ? null :
            org.springframework.boot.convert.DurationStyle.detectAndParse(maxPause.trim()));
    }

    public static final String MAX_PAUSE_SETTING = "sluice.exporting.max-pause";

    /** Sets {@code sluice.exporting.max-pause} (null: none). */
    public void maxPause(final Duration maxPause)
    {
        if (maxPause != null && (maxPause.isNegative() || maxPause.isZero()))
        {
            throw new IllegalArgumentException(MAX_PAUSE_SETTING + " must be positive, was " + maxPause);
        }
        this.maxPause = maxPause;
    }

    public ExportingControlService(
        final BrokerClient brokerClient, final ClusterTopology topology, final Duration requestTimeout, final Clock clock)
    {
        this(brokerClient, topology, requestTimeout, clock, ExportingOperationListener.NONE);
    }

    public ExportingControlService(
        final BrokerClient brokerClient,
        final ClusterTopology topology,
        final Duration requestTimeout,
        final Clock clock,
        final ExportingOperationListener listener)
    {
        if (requestTimeout.isNegative() || requestTimeout.isZero())
        {
            throw new IllegalArgumentException("sluice.gateway.request-timeout must be positive, was " + requestTimeout);
        }
        this.brokerClient = brokerClient;
        this.topology = topology;
        this.requestTimeout = requestTimeout;
        this.versions = new ExportingVersionSequence(clock);
        this.listener = listener;
        this.statusView = new ExportingStatusView(topology);
    }

    /**
     * Pauses (or soft-pauses) exporting on the targets, or on every pair of the distribution.
     *
     * @throws InvalidTargetsException before anything is sent, if a target is not a pair of the distribution.
     */
    public CompletableFuture<ExportingOperationResult> pause(final boolean soft, final Optional<List<PartitionReplica>> targets)
    {
        return pause(soft, targets, Optional.empty());
    }

    /**
     * Pauses (or soft-pauses) with a lease: the hold ends by itself when it runs out. Without one, the pause gets
     * {@code sluice.exporting.max-pause} when that is set.
     *
     * @throws InvalidTargetsException before anything is sent, for a lease not positive or above max-pause, or a
     *                                 target that is not a pair of the distribution.
     */
    public CompletableFuture<ExportingOperationResult> pause(
        final boolean soft, final Optional<List<PartitionReplica>> targets, final Optional<Duration> lease)
    {
        final Duration cap = maxPause;
        if (lease.isPresent())
        {
            final Duration given = lease.get();
            if (given.isNegative() || given.isZero())
            {
                throw new InvalidTargetsException("lease must be a positive ISO-8601 duration such as PT30M, was " + given +
                    "; nothing was paused");
            }
            if (cap != null && given.compareTo(cap) > 0)
            {
                throw new InvalidTargetsException("lease " + given + " is longer than " + MAX_PAUSE_SETTING + " (" + cap +
                    "); nothing was paused");
            }
        }
        final Duration effective = lease.orElse(cap);
        return execute(soft ? ExportingOperation.SOFT_PAUSE : ExportingOperation.PAUSE, targets,
            effective == null ? 0 : Math.max(1, effective.toNanos() / 1000));
    }

    /**
     * Resumes exporting on the targets, or on every pair of the distribution.
     *
     * @throws InvalidTargetsException before anything is sent, if a target is not a pair of the distribution.
     */
    public CompletableFuture<ExportingOperationResult> resume(final Optional<List<PartitionReplica>> targets)
    {
        return execute(ExportingOperation.RESUME, targets, 0);
    }

    /** Every pair's exporting state as its broker last reported it; never calls a broker. */
    public ExportingStatus status()
    {
        return statusView.status();
    }

    public Duration requestTimeout()
    {
        return requestTimeout;
    }

    private CompletableFuture<ExportingOperationResult> execute(
        final ExportingOperation operation, final Optional<List<PartitionReplica>> requested, final long leaseMicros)
    {
        final List<PartitionReplica> targets = resolveTargets(requested);
        final long version = versions.next(highestReportedVersion());
        final long startNanos = System.nanoTime();

        final List<CompletableFuture<TargetResult>> pending =
            fanOut(operation, adminOperation(operation, version, targets, leaseMicros), targets, version);
        return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).handle((ignored, error) ->
        {
            final List<TargetResult> results = new ArrayList<>(pending.size());
            for (final CompletableFuture<TargetResult> future : pending)
            {
                results.add(future.join());
            }
            final ExportingOperationResult result = new ExportingOperationResult(
                operation, ExportingOutcome.summarise(results.stream().map(TargetResult::outcome).toList()), results);
            final long elapsedNanos = System.nanoTime() - startNanos;
            log(result, version, elapsedNanos);
            try
            {
                listener.operationCompleted(result, elapsedNanos);
            }
            catch (final RuntimeException e)
            {
                LOG.warn("Recording {} metrics failed: {}", operation, e.toString());
            }
            return result;
        });
    }

    /** Sends {@code request} to every target at once; the futures in the order of the targets. */
    private List<CompletableFuture<TargetResult>> fanOut(
        final ExportingOperation operation, final AdminOperation request, final List<PartitionReplica> targets,
        final long version)
    {
        // The control group's leader proposes the operation's one entry on its first pair request, and the other
        // brokers wait for that entry: so its requests go out first, and the commit overlaps the rest of the fan-out.
        final int leader = request.controlLeaderTargeted() ? topology.controlLeader().orElse(-1) : -1;
        final List<CompletableFuture<TargetResult>> pending = new ArrayList<>(targets.size());
        for (int i = 0; i < targets.size(); i++)
        {
            pending.add(null);
        }
        for (int pass = leader < 0 ? 1 : 0; pass < 2; pass++)
        {
            for (int i = 0; i < targets.size(); i++)
            {
                final PartitionReplica target = targets.get(i);
                if ((target.brokerId() == leader) == (pass == 0))
                {
                    pending.set(i, send(operation, request, target, version, true));
                }
            }
        }
        return pending;
    }

    /**
     * Sends every pair of {@code brokerId} a pause at version 0, {@code rounds} times one after the other, so the
     * first pause an operator sends runs neither this gateway's fan-out nor the broker's admin path for the first time
     * (issue 30). It changes nothing: every replica holds version 0 or a newer one, so it answers the state it holds
     * without proposing anything; the answers are neither logged, nor metered, nor remembered as the pairs' state.
     * Completes with the number of pairs that answered (of {@code rounds} × the broker's pairs), never exceptionally.
     */
    public CompletableFuture<Integer> warmUp(final int brokerId, final int rounds)
    {
        final List<PartitionReplica> targets = topology.distribution().replicas().stream()
            .filter((replica) -> replica.brokerId() == brokerId).toList();
        CompletableFuture<Integer> answered = CompletableFuture.completedFuture(0);
        if (targets.isEmpty())
        {
            return answered;
        }
        final AdminOperation request = adminOperation(ExportingOperation.PAUSE, 0, targets, 0);
        for (int round = 0; round < rounds; round++)
        {
            answered = answered.thenCompose((sofar) ->
            {
                final List<CompletableFuture<TargetResult>> pending = new ArrayList<>(targets.size());
                for (final PartitionReplica target : targets)
                {
                    pending.add(send(ExportingOperation.PAUSE, request, target, 0, false));
                }
                return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).thenApply((ignored) ->
                    sofar + (int)pending.stream().filter((future) -> future.join().outcome() == ExportingOutcome.SUCCEEDED).count());
            });
        }
        return answered;
    }

    private List<PartitionReplica> resolveTargets(final Optional<List<PartitionReplica>> requested)
    {
        final PartitionDistribution distribution = topology.distribution();
        if (requested.isEmpty())
        {
            return distribution.replicas();
        }
        final List<PartitionReplica> given = requested.get();
        if (given.isEmpty())
        {
            throw new InvalidTargetsException("targets must not be empty; omit the body to act on every pair");
        }
        final LinkedHashSet<PartitionReplica> unique = new LinkedHashSet<>();
        for (final PartitionReplica target : given)
        {
            if (target == null)
            {
                throw new InvalidTargetsException("a target must be {\"brokerId\": <int>, \"partitionId\": <int>}");
            }
            if (!distribution.contains(target))
            {
                throw new InvalidTargetsException(describeOutsider(distribution, target));
            }
            unique.add(target);
        }
        return unique.stream().sorted().toList();
    }

    private static String describeOutsider(final PartitionDistribution distribution, final PartitionReplica target)
    {
        if (!distribution.isBroker(target.brokerId()))
        {
            return target + " is not in the cluster: broker " + target.brokerId() + " does not exist (brokers are 0.." +
                (distribution.brokerCount() - 1) + ")";
        }
        if (!distribution.isPartition(target.partitionId()))
        {
            return target + " is not in the cluster: partition " + target.partitionId() +
                " does not exist (partitions are 1.." + distribution.partitionCount() + ")";
        }
        return target + " is not in the cluster: partition " + target.partitionId() + " is replicated on brokers " +
            distribution.replicasOf(target.partitionId());
    }

    /** The highest version any reachable replica reported, so a new version beats it even across clock skew. */
    private long highestReportedVersion()
    {
        long highest = 0;
        for (final PartitionReplica replica : topology.distribution().replicas())
        {
            final Optional<PartitionStatus> status = topology.status(replica);
            if (status.isPresent())
            {
                highest = Math.max(highest, status.get().exportingStateVersion());
            }
        }
        return highest;
    }

    /**
     * The operation as each of its pair requests names it: every partition when it targets every pair, else the
     * partitions of its targets; and whether it also reaches the control group's leader (as last polled). Then the
     * other brokers wait for the leader's entry rather than each proposing one, so the whole operation costs one
     * control group commit; without the leader each proposes at once instead of waiting for nothing.
     */
    private AdminOperation adminOperation(
        final ExportingOperation operation, final long version, final List<PartitionReplica> targets, final long leaseMicros)
    {
        final OptionalInt controlLeader = topology.controlLeader();
        final boolean leaderTargeted = controlLeader.isPresent() && !topology.isKnownDown(controlLeader.getAsInt()) &&
            targets.stream().anyMatch((target) -> target.brokerId() == controlLeader.getAsInt());
        if (targets.size() == topology.distribution().replicas().size())
        {
            return new AdminOperation(operation.requestKind(), version, leaderTargeted, true, new int[0], leaseMicros);
        }
        return new AdminOperation(operation.requestKind(), version, leaderTargeted, false,
            targets.stream().mapToInt(PartitionReplica::partitionId).distinct().sorted().toArray(), leaseMicros);
    }

    /**
     * One pair's request, classified; never completes exceptionally. {@code remember}: take a successful answer as
     * the pair's state in the status view (false only for the warm-ups, whose answers are not an operator's).
     */
    private CompletableFuture<TargetResult> send(
        final ExportingOperation operation, final AdminOperation request, final PartitionReplica target, final long version,
        final boolean remember)
    {
        // Fail at once only where no connection can be had; a hung broker gets its request and times out (504).
        if (topology.isKnownDown(target.brokerId()))
        {
            return CompletableFuture.completedFuture(
                TargetResult.failed(target, "broker " + target.brokerId() + " unreachable"));
        }
        final CompletableFuture<AdminResult> answer;
        try
        {
            answer = brokerClient.admin(target, request, requestTimeout);
        }
        catch (final RuntimeException e)
        {
            return CompletableFuture.completedFuture(classifyFailure(target, e));
        }
        return answer
            .orTimeout(requestTimeout.plus(DEADLINE_GRACE).toMillis(), TimeUnit.MILLISECONDS)
            .handle((result, error) ->
            {
                if (error != null)
                {
                    return classifyFailure(target, error);
                }
                final TargetResult classified = classifyAnswer(operation, target, version, result);
                if (remember && classified.outcome() == ExportingOutcome.SUCCEEDED)
                {
                    statusView.remember(new AdminResult(target, result.state(), result.version(), result.exportedPosition(),
                        result.lastPosition(), result.hold()));
                }
                return classified;
            });
    }

    private static TargetResult classifyAnswer(
        final ExportingOperation operation, final PartitionReplica target, final long version, final AdminResult answer)
    {
        if (answer == null)
        {
            return TargetResult.failed(target, target + ": empty answer");
        }
        final ExportingState held = answer.state();
        if (held == operation.targetState() && answer.version() >= version)
        {
            return TargetResult.succeeded(target);
        }
        if (answer.version() > version)
        {
            return TargetResult.failed(target, target + ": a newer request won: the replica holds " + ExportingStatusView.stateName(held) +
                " at version " + answer.version() + ", newer than this " + operation + " (version " + version + ")");
        }
        return TargetResult.failed(target, target + ": answered " + ExportingStatusView.stateName(held) + " at version " + answer.version() +
            " to " + operation + " at version " + version);
    }

    private TargetResult classifyFailure(final PartitionReplica target, final Throwable failure)
    {
        final Throwable cause = Futures.unwrapAll(failure);
        return switch (BrokerFailure.of(cause))
        {
            case TIMED_OUT -> TargetResult.timedOut(target, target + ": no answer within " + requestTimeout.toMillis() + " ms");
            case UNREACHABLE -> TargetResult.failed(target, target + ": broker " + target.brokerId() + " unreachable" +
                (cause.getMessage() == null ? "" : " (" + cause.getMessage() + ")"));
            case UNAVAILABLE, REFUSED -> TargetResult.failed(target, target + ": " + describe((BrokerErrorException)cause));
            default -> TargetResult.failed(target, target + ": " + cause.getClass().getSimpleName() +
                (cause.getMessage() == null ? "" : ": " + cause.getMessage()));
        };
    }

    private static String describe(final BrokerErrorException error)
    {
        final ErrorCode code = error.code();
        final String message = error.getMessage();
        if (code == ErrorCode.NOT_LEADER)
        {
            return "not leader" + (error.leaderId() >= 0 ? " (leader is " + error.leaderId() + ")" : " (no leader known)");
        }
        final String name = code == null ? "error" : code.name().toLowerCase().replace('_', ' ');
        return message == null || message.isBlank() ? name : name + ": " + message;
    }

    private static void log(final ExportingOperationResult result, final long version, final long elapsedNanos)
    {
        final StringBuilder line = new StringBuilder(128)
            .append(result.operation()).append(" version ").append(version).append(": ")
            .append(result.result()).append(", ")
            .append(result.targets().size()).append(" targets, ")
            .append(result.count(ExportingOutcome.SUCCEEDED)).append(" succeeded, ")
            .append(result.count(ExportingOutcome.FAILED)).append(" failed, ")
            .append(result.count(ExportingOutcome.TIMED_OUT)).append(" timed out in ")
            .append(TimeUnit.NANOSECONDS.toMillis(elapsedNanos)).append(" ms");
        int logged = 0;
        for (final TargetResult target : result.targets())
        {
            if (target.outcome() != ExportingOutcome.SUCCEEDED)
            {
                if (logged == MAX_LOGGED_FAILURES)
                {
                    line.append("; ...");
                    break;
                }
                final String pair = target.replica().toString();
                line.append(logged == 0 ? "; " : ", ");
                if (!target.error().startsWith(pair))
                {
                    line.append(pair).append(": ");
                }
                line.append(target.error());
                logged++;
            }
        }
        if (result.result() == ExportingOutcome.SUCCEEDED)
        {
            LOG.info("{}", line);
        }
        else
        {
            LOG.warn("{}", line);
        }
    }
}
