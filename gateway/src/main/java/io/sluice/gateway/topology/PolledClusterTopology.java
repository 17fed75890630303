package io.sluice.gateway.topology;

import io.sluice.gateway.broker.BrokerClient;
import io.sluice.gateway.broker.BrokerDisk;
import io.sluice.gateway.broker.BrokerFailure;
import io.sluice.gateway.broker.BrokerTopology;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.concurrent.Futures;
import io.sluice.protocol.transport.PeerUnreachableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntConsumer;

/**
 * {@link ClusterTopology} kept fresh by polling every broker's topology API.
 * <p>
 * Every {@code pollInterval} each reachable broker without a poll in flight is asked, all concurrently, with a
 * {@code pollTimeout} deadline. A failed or timed-out poll marks the broker unreachable at once and drops
 * its partitions' live state, so a dead broker is noticed within about interval + timeout. An unreachable broker
 * (stopped, starting, not polled yet) is asked every {@link #DOWN_POLL_INTERVAL} instead (or {@code pollInterval} when
 * that is shorter): asking a stopped broker costs a refused connection, and a restarted one is seen serving within
 * about 100 ms instead of a whole interval (issue 30).
 * <p>
 * Thread-safety: each broker's state is one immutable {@link BrokerView} swapped atomically, so readers
 * never block and always see one consistent answer per broker.
 */
public final class PolledClusterTopology implements ClusterTopology, AutoCloseable
{
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(500);
    public static final Duration DEFAULT_POLL_TIMEOUT = Duration.ofMillis(1500);
    /** How often an unreachable broker is asked. */
    public static final Duration DOWN_POLL_INTERVAL = Duration.ofMillis(100);

    private static final Logger LOG = LoggerFactory.getLogger(PolledClusterTopology.class);

    private final PartitionDistribution distribution;
    private final BrokerClient client;
    private final Duration pollInterval;
    private final Duration pollTimeout;
    /** How often an unreachable broker is asked: the poller's tick. */
    private final Duration downPollInterval;
    private final AtomicReferenceArray<BrokerView> views;
    /** Per broker, when its next poll is due ({@link System#nanoTime}), set as its last poll completes. */
    private final AtomicLongArray nextPollNanos;
    /** The highest count of lease expiries any broker reported: the control group's count only grows. */
    private final java.util.concurrent.atomic.AtomicLong leaseExpiries = new java.util.concurrent.atomic.AtomicLong();
    private final AtomicBoolean[] polling;
    private final ScheduledExecutorService scheduler;
    private final List<IntConsumer> reachableListeners = new CopyOnWriteArrayList<>();

    public PolledClusterTopology(
        final PartitionDistribution distribution,
        final BrokerClient client,
        final Duration pollInterval,
        final Duration pollTimeout)
    {
        this.distribution = distribution;
        this.client = client;
        this.pollInterval = pollInterval;
        this.pollTimeout = pollTimeout;
        this.downPollInterval = pollInterval.compareTo(DOWN_POLL_INTERVAL) < 0 ? pollInterval : DOWN_POLL_INTERVAL;
        this.views = new AtomicReferenceArray<>(distribution.brokerCount());
        this.nextPollNanos = new AtomicLongArray(distribution.brokerCount());
        final long now = System.nanoTime();
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            nextPollNanos.set(b, now);
        }
        this.polling = new AtomicBoolean[distribution.brokerCount()];
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            views.set(b, BrokerView.unreachable("not polled yet", false, 0));
            polling[b] = new AtomicBoolean();
        }
        this.scheduler = Executors.newSingleThreadScheduledExecutor(runnable ->
        {
            final Thread thread = new Thread(runnable, "sluice-topology-poller");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Starts polling; the first round goes out at once. */
    public PolledClusterTopology start()
    {
        scheduler.scheduleWithFixedDelay(this::pollAll, 0, downPollInterval.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    /**
     * Calls {@code listener} with a broker's id each time the broker becomes reachable (its first answered poll, and
     * its first after being unreachable), on the poller's thread: it must not block.
     */
    public void onReachable(final IntConsumer listener)
    {
        reachableListeners.add(listener);
    }

    @Override
    public void close()
    {
        scheduler.shutdownNow();
    }

    @Override
    public PartitionDistribution distribution()
    {
        return distribution;
    }

    @Override
    public boolean isReachable(final int brokerId)
    {
        return distribution.isBroker(brokerId) && views.get(brokerId).reachable();
    }

    @Override
    public Optional<PartitionStatus> status(final PartitionReplica replica)
    {
        if (!distribution.contains(replica))
        {
            return Optional.empty();
        }
        final BrokerView view = views.get(replica.brokerId());
        return view.reachable() ? Optional.ofNullable(view.partitions().get(replica.partitionId())) : Optional.empty();
    }

    @Override
    public OptionalInt leaderOf(final int partitionId)
    {
        if (!distribution.isPartition(partitionId))
        {
            return OptionalInt.empty();
        }
        int leader = -1;
        long leaderTerm = Long.MIN_VALUE;
        for (final int brokerId : distribution.replicasOf(partitionId))
        {
            final BrokerView view = views.get(brokerId);
            final PartitionStatus status = view.reachable() ? view.partitions().get(partitionId) : null;
            if (status != null && status.role() == PartitionRole.LEADER && status.term() > leaderTerm)
            {
                leader = brokerId;
                leaderTerm = status.term();
            }
        }
        return leader < 0 ? OptionalInt.empty() : OptionalInt.of(leader);
    }

    @Override
    public OptionalInt controlLeader()
    {
        // The id most reachable brokers name: one that just lost the leadership, or has not heard of the new one,
        // is outvoted by the others.
        final int[] votes = new int[distribution.brokerCount()];
        int best = -1;
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            final BrokerView view = views.get(b);
            final int leader = view.controlLeaderId();
            if (view.reachable() && leader >= 0 && leader < votes.length && ++votes[leader] > (best < 0 ? 0 : votes[best]))
            {
                best = leader;
            }
        }
        return best < 0 ? OptionalInt.empty() : OptionalInt.of(best);
    }

    @Override
    public long leaseExpiries()
    {
        return leaseExpiries.get();
    }

    @Override
    public boolean isControlCaughtUp(final int brokerId)
    {
        final BrokerView view = views.get(brokerId);
        return view.reachable() && view.controlCaughtUp();
    }

    @Override
    public BrokerDisk disk(final int brokerId)
    {
        return distribution.isBroker(brokerId) ? views.get(brokerId).disk() : BrokerDisk.UNKNOWN;
    }

    @Override
    public boolean isKnownDown(final int brokerId)
    {
        return distribution.isBroker(brokerId) && views.get(brokerId).connectionFailed();
    }

    /** Why the broker is unreachable (the last poll's failure), or empty while it answers. */
    public Optional<String> unreachableReason(final int brokerId)
    {
        final BrokerView view = views.get(brokerId);
        return view.reachable() ? Optional.empty() : Optional.of(view.failure());
    }

    /** Whether every partition has a reachable leader. */
    public boolean everyPartitionHasLeader()
    {
        for (int p = 1; p <= distribution.partitionCount(); p++)
        {
            if (leaderOf(p).isEmpty())
            {
                return false;
            }
        }
        return true;
    }

    private void pollAll()
    {
        // Half a tick early counts as due: the ticks drift by the time each round takes.
        final long slack = downPollInterval.toNanos() / 2;
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            final int brokerId = b;
            if (System.nanoTime() + slack - nextPollNanos.get(brokerId) < 0 || !polling[brokerId].compareAndSet(false, true))
            {
                continue;
            }
            final long startedNanos = System.nanoTime();
            CompletableFuture<BrokerTopology> poll;
            try
            {
                poll = client.topology(brokerId, pollTimeout);
            }
            catch (final RuntimeException e)
            {
                poll = CompletableFuture.failedFuture(e);
            }
            poll.whenComplete((topology, error) ->
            {
                try
                {
                    onPolled(brokerId, topology, error, startedNanos);
                }
                finally
                {
                    nextPollNanos.set(brokerId, startedNanos +
                        (views.get(brokerId).reachable() ? pollInterval : downPollInterval).toNanos());
                    polling[brokerId].set(false);
                }
            });
        }
    }

    private void onPolled(final int brokerId, final BrokerTopology topology, final Throwable error, final long startedNanos)
    {
        final BrokerView previous = views.get(brokerId);
        if (error == null)
        {
            final Map<Integer, PartitionStatus> partitions = new HashMap<>();
            for (final PartitionStatus status : topology.partitions())
            {
                // Only the pairs of the static distribution count; a stray group must not confuse routing.
                if (distribution.contains(brokerId, status.partitionId()))
                {
                    partitions.put(status.partitionId(), status);
                }
            }
            views.set(brokerId, new BrokerView(true, Map.copyOf(partitions), null, false, startedNanos,
                topology.controlLeaderId(), topology.controlCaughtUp(), topology.disk()));
            leaseExpiries.accumulateAndGet(topology.leaseExpiries(), Math::max);
            if (!previous.reachable())
            {
                LOG.info("broker {} at {} is reachable ({} partitions reported)",
                    brokerId, address(brokerId), partitions.size());
                for (final IntConsumer listener : reachableListeners)
                {
                    try
                    {
                        listener.accept(brokerId);
                    }
                    catch (final RuntimeException e)
                    {
                        LOG.warn("a listener of broker {} becoming reachable failed: {}", brokerId, e.toString());
                    }
                }
            }
        }
        else
        {
            final Throwable cause = Futures.unwrapAll(error);
            final String reason = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
            // A broker still starting listens but answers UNAVAILABLE to everything until its Raft groups are
            // recovered: as down as one not listening, so operations fail its pairs at once as they always did.
            final boolean down = cause instanceof PeerUnreachableException ||
                BrokerFailure.errorCode(cause) == ErrorCode.UNAVAILABLE;
            views.set(brokerId, BrokerView.unreachable(reason, down, startedNanos));
            if (previous.reachable())
            {
                LOG.warn("broker {} at {} is unreachable: {}", brokerId, address(brokerId), reason);
            }
        }
    }

    private String address(final int brokerId)
    {
        return distribution.commandAddress(brokerId).getHostString() + ":" + distribution.commandAddress(brokerId).getPort();
    }

    /** One broker as last polled. Immutable. */
    private record BrokerView(
        boolean reachable,
        Map<Integer, PartitionStatus> partitions,
        String failure,
        boolean connectionFailed,
        long polledAtNanos,
        int controlLeaderId,
        boolean controlCaughtUp,
        BrokerDisk disk)
    {
        static BrokerView unreachable(final String failure, final boolean connectionFailed, final long polledAtNanos)
        {
            return new BrokerView(false, Map.of(), failure, connectionFailed, polledAtNanos, -1, false, BrokerDisk.UNKNOWN);
        }
    }

    /** The partitions of the distribution, for callers that list pairs. */
    public List<PartitionReplica> replicas()
    {
        return distribution.replicas();
    }
}
