package io.sluice.broker.raft;

import io.sluice.protocol.concurrent.Futures;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The Raft client through which a replica that does not lead its group proposes to the leader (a partition's, or
 * the control group's): made on first use, pointed at the leader the local replica knows, and closed once with the
 * group's owner. Thread-safe.
 * <p>
 * A Raft client sends its ordered requests through one sliding window, and Ratis fails that window for good once one
 * of its requests fails (its retries ran out, the group did not match, the call broke): every later request through
 * the same client then fails at once with "...->RAFT is closed". So a call that fails retires the client it went
 * through; the next call makes a new one, and the retired one is closed when its last call in flight ends.
 */
public final class GroupClient implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(GroupClient.class);

    private final String name;
    private final RaftGroup group;
    private final RaftProperties properties;
    private final Parameters parameters;
    private final RetryPolicy retryPolicy;
    private final Supplier<RaftServer.Division> division;
    /** The client new calls go through, or null until the next call makes one. */
    private Lease current;
    /** Clients retired after a failure whose calls have not all ended. */
    private final List<Lease> retired = new ArrayList<>();
    private long made;
    private boolean closed;

    /**
     * @param name        what the group is, for the log lines this writes ("partition 3 on broker 1").
     * @param parameters  the TLS parameters of a client, or null for none.
     * @param division    the local replica, or null while there is none: the client starts at the leader it knows.
     */
    public GroupClient(
        final String name,
        final RaftGroup group,
        final RaftProperties properties,
        final Parameters parameters,
        final RetryPolicy retryPolicy,
        final Supplier<RaftServer.Division> division)
    {
        this.name = name;
        this.group = group;
        this.properties = properties;
        this.parameters = parameters == null ? new Parameters() : parameters;
        this.retryPolicy = retryPolicy;
        this.division = division;
    }

    /**
     * Makes {@code call} through the current client, made now if there is none; a call that fails retires that client.
     *
     * @param whenClosed the owner's failure, thrown once this is closed.
     */
    public CompletableFuture<RaftClientReply> call(
        final Function<RaftClient, CompletableFuture<RaftClientReply>> call,
        final Supplier<? extends RuntimeException> whenClosed)
    {
        final Lease lease;
        synchronized (this)
        {
            if (closed)
            {
                throw whenClosed.get();
            }
            if (current == null)
            {
                current = new Lease(newClient(), ++made);
            }
            lease = current;
            lease.inFlight++;
        }
        CompletableFuture<RaftClientReply> reply;
        try
        {
            reply = call.apply(lease.client);
        }
        catch (final RuntimeException e)
        {
            reply = CompletableFuture.failedFuture(e);
        }
        return reply.whenComplete((r, failure) -> ended(lease, failure));
    }

    /** How many Raft clients this has made: one, unless calls failed. */
    public synchronized long clientsMade()
    {
        return made;
    }

    private RaftClient newClient()
    {
        final RaftServer.Division local = division.get();
        return RaftClient.newBuilder()
            .setProperties(properties)
            .setParameters(parameters)
            .setRaftGroup(group)
            .setClientId(ClientId.randomId())
            .setLeaderId(local == null ? null : local.getInfo().getLeaderId())
            .setRetryPolicy(retryPolicy)
            .build();
    }

    private void ended(final Lease lease, final Throwable failure)
    {
        final boolean close;
        synchronized (this)
        {
            lease.inFlight--;
            if (failure != null && current == lease)
            {
                current = null;
                if (!closed)
                {
                    retired.add(lease);
                    LOG.info("{}: a call through Raft client {} failed ({}); the next call goes through a new one",
                        name, lease.number, Futures.unwrapAll(failure).toString());
                }
            }
            close = lease.inFlight == 0 && retired.remove(lease);
        }
        if (close)
        {
            // Not on the thread that completed the call: it may be one of the client's own.
            CompletableFuture.runAsync(() -> closeQuietly(lease));
        }
    }

    private void closeQuietly(final Lease lease)
    {
        try
        {
            lease.client.close();
        }
        catch (final IOException | RuntimeException e)
        {
            LOG.warn("{}: failed to close Raft client {}", name, lease.number, e);
        }
    }

    @Override
    public void close()
    {
        final List<Lease> toClose = new ArrayList<>();
        synchronized (this)
        {
            closed = true;
            if (current != null)
            {
                toClose.add(current);
                current = null;
            }
            toClose.addAll(retired);
            retired.clear();
        }
        toClose.forEach(this::closeQuietly);
    }

    /** One Raft client and the calls in flight through it. Guarded by the owner's lock. */
    private static final class Lease
    {
        final RaftClient client;
        final long number;
        int inFlight;

        Lease(final RaftClient client, final long number)
        {
            this.client = client;
            this.number = number;
        }
    }
}
