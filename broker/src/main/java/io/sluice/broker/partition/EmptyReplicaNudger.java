package io.sluice.broker.partition;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Gets an emptied replica (its data directory deleted, rejoining under the same leader) its log back on an
 * idle partition.
 * <p>
 * The leader still holds the replica's old match index. Ratis 3.2 answers an INCONSISTENCY reply to a
 * heartbeat with "next index = match index + 1" (RATIS-2523), so while the leader has no new entry to send it
 * keeps sending heartbeats the empty replica cannot accept, and the replica stays empty: with exporting
 * paused a partition can be idle for as long as a backup takes. A real entry breaks the loop: its first index
 * is match index + 1, so the leader takes the replica's reply (next index 0) and sends the log, or a snapshot.
 * <p>
 * So a follower whose Raft log and snapshot stay empty for {@link #GRACE_NANOS} under a known leader asks it,
 * through a Raft client, to append a no-op entry (exporter positions with no exporters), and asks again every
 * {@link #RETRY_NANOS} while it stays empty. A healthy follower gets the leader's first entry within
 * milliseconds of an election, so a spurious no-op is rare and harmless.
 * <p>
 * Not thread-safe: {@link #check()} is called from one periodic task.
 */
public final class EmptyReplicaNudger implements AutoCloseable
{
    static final long GRACE_NANOS = TimeUnit.SECONDS.toNanos(3);
    static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(5);

    private static final Logger LOG = LoggerFactory.getLogger(EmptyReplicaNudger.class);
    private static final Message NO_OP = noOpEntry();

    private final int brokerId;
    private final RaftProperties clientProperties;
    private final Parameters clientParameters;
    private final List<Replica> replicas = new ArrayList<>();
    private volatile boolean closed;

    public EmptyReplicaNudger(
        final int brokerId, final Collection<Partition> partitions, final RaftProperties clientProperties)
    {
        this(brokerId, partitions, clientProperties, new Parameters());
    }

    /** @param clientParameters Ratis client parameters (the gRPC TLS settings when cluster TLS is on). */
    public EmptyReplicaNudger(
        final int brokerId,
        final Collection<Partition> partitions,
        final RaftProperties clientProperties,
        final Parameters clientParameters)
    {
        this.brokerId = brokerId;
        this.clientProperties = clientProperties;
        this.clientParameters = clientParameters;
        for (final Partition partition : partitions)
        {
            replicas.add(new Replica(partition));
        }
    }

    /** Asks the leader for a no-op entry on behalf of every replica that has stayed empty too long. */
    public void check()
    {
        if (closed)
        {
            return;
        }
        final long now = System.nanoTime();
        for (final Replica replica : replicas)
        {
            final RaftServer.Division division = replica.partition.member().division();
            if (division == null)
            {
                continue;
            }
            final DivisionInfo info = division.getInfo();
            // Only under a known leader: during an election there is nobody to append, and no stale index.
            final boolean empty = !info.isLeader() && info.getLeaderId() != null &&
                division.getRaftLog().getLastEntryTermIndex() == null &&
                division.getStateMachine().getLatestSnapshot() == null;
            if (!empty)
            {
                replica.empty = false;
                continue;
            }
            if (!replica.empty)
            {
                replica.empty = true;
                replica.emptySince = now;
                replica.nextNudgeAt = now + GRACE_NANOS;
            }
            if (now - replica.nextNudgeAt >= 0 && !replica.inFlight)
            {
                if (replica.failed)
                {
                    // A failed ordered client may hold the failed call's slot; start afresh.
                    replica.closeClient(brokerId);
                    replica.failed = false;
                }
                replica.nextNudgeAt = now + RETRY_NANOS;
                nudge(replica, info);
            }
        }
    }

    private void nudge(final Replica replica, final DivisionInfo info)
    {
        final int partitionId = replica.partition.partitionId();
        final RaftClient client;
        try
        {
            client = replica.client(info);
        }
        catch (final RuntimeException e)
        {
            LOG.warn("partition {} on broker {}: cannot build a Raft client to nudge the leader: {}",
                partitionId, brokerId, e.toString());
            return;
        }
        LOG.info("partition {} on broker {}: log still empty under leader {} after {} ms, asking it for a no-op entry",
            partitionId, brokerId, info.getLeaderId(),
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - replica.emptySince));
        replica.inFlight = true;
        client.async().send(NO_OP).whenComplete((reply, failure) ->
        {
            if (failure != null || !reply.isSuccess())
            {
                replica.failed = true;
                LOG.warn("partition {} on broker {}: no-op entry for the leader not committed: {}", partitionId,
                    brokerId, failure != null ? failure.toString() : String.valueOf(reply.getException()));
            }
            replica.inFlight = false;
        });
    }

    @Override
    public void close()
    {
        closed = true;
        for (final Replica replica : replicas)
        {
            replica.closeClient(brokerId);
        }
    }

    /** An exporter positions entry naming no exporter: it changes nothing but makes the leader replicate. */
    private static Message noOpEntry()
    {
        return StateEntries.exporterPositions(Map.of());
    }

    private final class Replica
    {
        private final Partition partition;
        private boolean empty;
        private long emptySince;
        private long nextNudgeAt;
        private volatile boolean inFlight;
        private volatile boolean failed;
        private RaftClient client;

        Replica(final Partition partition)
        {
            this.partition = partition;
        }

        synchronized RaftClient client(final DivisionInfo info)
        {
            if (client == null)
            {
                // Bounded retries: the next check asks again if this one finds no leader.
                client = RaftClient.newBuilder()
                    .setProperties(clientProperties)
                    .setParameters(clientParameters)
                    .setRaftGroup(partition.group())
                    .setClientId(ClientId.randomId())
                    .setLeaderId(info.getLeaderId())
                    .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                        10, TimeDuration.valueOf(200, TimeUnit.MILLISECONDS)))
                    .build();
            }
            return client;
        }

        synchronized void closeClient(final int brokerId)
        {
            if (client == null)
            {
                return;
            }
            try
            {
                client.close();
            }
            catch (final IOException e)
            {
                LOG.warn("partition {} on broker {}: failed to close the nudging Raft client",
                    partition.partitionId(), brokerId, e);
            }
            client = null;
        }
    }
}
