package io.sluice.broker.raft;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.function.Supplier;

/**
 * The Raft client through which a replica that does not lead its group proposes to the leader (a partition's, or
 * the control group's): made on first use, pointed at the leader the local replica knows, and closed once with the
 * group's owner. Thread-safe.
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
    private RaftClient client;
    private boolean closed;

    /**
     * @param name        what the group is, for the one log line a failed close writes ("partition 3 on broker 1").
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
     * The client, made now if this is its first use.
     *
     * @param whenClosed the owner's failure, thrown once this is closed.
     */
    public synchronized RaftClient get(final Supplier<? extends RuntimeException> whenClosed)
    {
        if (closed)
        {
            throw whenClosed.get();
        }
        if (client == null)
        {
            final RaftServer.Division local = division.get();
            client = RaftClient.newBuilder()
                .setProperties(properties)
                .setParameters(parameters)
                .setRaftGroup(group)
                .setClientId(ClientId.randomId())
                .setLeaderId(local == null ? null : local.getInfo().getLeaderId())
                .setRetryPolicy(retryPolicy)
                .build();
        }
        return client;
    }

    @Override
    public void close()
    {
        final RaftClient toClose;
        synchronized (this)
        {
            closed = true;
            toClose = client;
            client = null;
        }
        if (toClose != null)
        {
            try
            {
                toClose.close();
            }
            catch (final IOException | RuntimeException e)
            {
                LOG.warn("{}: failed to close the Raft client", name, e);
            }
        }
    }
}
