package io.sluice.broker.raft;

import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.ReplicationLevel;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * This broker's member of one Raft group (a partition's or the cluster control group's): the one seam through which
 * the broker's code talks to Ratis as a member, so every group differs only in its state. It finds the group's
 * division on this broker's server, proposes entries in process, sends them to the leader through a Raft client
 * ({@link GroupClient}) when this replica does not lead, asks for transfers and snapshots, and maps a refused reply to
 * the owner's error ({@link Refusals}).
 * <p>
 * Thread-safe.
 */
public final class GroupMember implements AutoCloseable
{
    /** How the owner of a group says what went wrong, in its own exception type and words. */
    public interface Refusals
    {
        /** The replica asked does not lead; {@code leaderId} is the leader it names, or -1. */
        RuntimeException notLeader(int leaderId, Throwable cause);

        /** This replica leads but is not ready yet (its first entry of the term has not committed). */
        RuntimeException leaderNotReady(Throwable cause);

        /** Any other refusal of the group. */
        RuntimeException refused(Throwable cause);

        /** The entry could not be sent at all: not started, closed, or the call failed. */
        RuntimeException unavailable(String why);
    }

    private final int brokerId;
    private final RaftGroup group;
    private final RaftPeerId selfId;
    private final Refusals refusals;
    private final GroupClient client;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private volatile RaftServer server;
    private volatile RaftServer.Division cachedDivision;
    private volatile boolean closed;

    /**
     * @param name        what the group is on this broker, for logs ("partition 3 on broker 1").
     * @param retryPolicy how the Raft client retries an entry sent to the leader.
     */
    public GroupMember(
        final String name,
        final int brokerId,
        final RaftGroup group,
        final RaftProperties clientProperties,
        final Parameters clientParameters,
        final RetryPolicy retryPolicy,
        final Refusals refusals)
    {
        this.brokerId = brokerId;
        this.group = group;
        this.selfId = RaftPeers.peerId(brokerId);
        this.refusals = refusals;
        this.client = new GroupClient(name, group, clientProperties, clientParameters, retryPolicy, this::division);
    }

    /** Serves the group from {@code server} (once, before the group is added to it). */
    public void attach(final RaftServer server)
    {
        this.server = server;
        this.cachedDivision = null;
    }

    public RaftGroup group()
    {
        return group;
    }

    public RaftGroupId groupId()
    {
        return group.getGroupId();
    }

    public RaftPeerId selfId()
    {
        return selfId;
    }

    public int brokerId()
    {
        return brokerId;
    }

    public boolean isClosed()
    {
        return closed;
    }

    /**
     * The group's division on this broker, looked up once: leadership is checked on every export run, and Ratis's
     * lookup goes through a future per call. Null until the server has the group.
     */
    public RaftServer.Division division()
    {
        final RaftServer.Division cached = cachedDivision;
        if (cached != null)
        {
            return cached;
        }
        final RaftServer server = this.server;
        if (server == null)
        {
            return null;
        }
        try
        {
            final RaftServer.Division found = server.getDivision(group.getGroupId());
            cachedDivision = found;
            return found;
        }
        catch (final Exception e)
        {
            return null;
        }
    }

    /** The division while this member is not closed, else null. */
    public RaftServer.Division openDivision()
    {
        final RaftServer.Division division = division();
        return closed ? null : division;
    }

    /** Whether this replica leads the group now (ready or not). */
    public boolean isLeader()
    {
        final RaftServer.Division division = openDivision();
        return division != null && division.getInfo().isLeader();
    }

    /** Whether this replica is the group's ready leader: its term's first entry committed. */
    public boolean isReadyLeader()
    {
        final RaftServer.Division division = openDivision();
        if (division == null)
        {
            return false;
        }
        final DivisionInfo info = division.getInfo();
        return info.isLeader() && info.isLeaderReady();
    }

    /** The broker this replica believes leads the group, or -1. */
    public int knownLeaderId()
    {
        final RaftServer.Division division = division();
        return division == null ? -1 : RaftPeers.brokerIdOf(division.getInfo().getLeaderId());
    }

    /** The current term while this replica leads, else -1. */
    public long leaderTerm()
    {
        final RaftServer.Division division = division();
        if (division == null)
        {
            return -1;
        }
        final DivisionInfo info = division.getInfo();
        return info.isLeader() ? info.getCurrentTerm() : -1;
    }

    /** The commit index this replica knows, -1 before the group runs here. */
    public long commitIndex()
    {
        final RaftServer.Division division = openDivision();
        return division == null ? -1 : division.getRaftLog().getLastCommittedIndex();
    }

    // ------------------------------------------------------------------------------------------- proposals

    /**
     * Proposes an entry to this replica's Raft server in process; completes with Ratis's reply, successful or not
     * ({@link #refusal}). Fails with the owner's {@link Refusals#unavailable} when it cannot be proposed at all.
     */
    public CompletableFuture<RaftClientReply> submitLocal(final Message message)
    {
        final RaftServer server = this.server;
        if (server == null)
        {
            return CompletableFuture.failedFuture(refusals.unavailable("not started"));
        }
        try
        {
            return server.submitClientRequestAsync(RaftClientRequest.newBuilder()
                .setClientId(clientId)
                .setServerId(selfId)
                .setGroupId(group.getGroupId())
                .setCallId(callIds.incrementAndGet())
                .setMessage(message)
                .setType(RaftClientRequest.writeRequestType())
                .build());
        }
        catch (final Exception e)
        {
            return CompletableFuture.failedFuture(refusals.unavailable(e.toString()));
        }
    }

    /** Sends an entry to the group's leader through this replica's Raft client, which retries by its policy. */
    public CompletableFuture<RaftClientReply> submitThroughClient(final Message message)
    {
        try
        {
            return client.call((raft) -> raft.async().send(message), () -> refusals.unavailable("closed"));
        }
        catch (final RuntimeException e)
        {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** How many Raft clients this member has made to reach the leader: a new one after each failed call. */
    public long clientsMade()
    {
        return client.clientsMade();
    }

    /**
     * Makes this replica's Raft client now and sends it one request that changes nothing (a watch of index 0, which
     * the leader answers at once): the first use of a Raft client in a JVM loads and links the gRPC client code, a
     * good part of a second that a later proposal then does not wait for, and the client learns the leader. Completes
     * when answered or failed (a failure only means the client stays cold); {@code null} once closed.
     */
    public CompletableFuture<Void> warmClient()
    {
        try
        {
            return client.call((raft) -> raft.async().watch(0, ReplicationLevel.MAJORITY),
                () -> refusals.unavailable("closed")).handle((reply, failure) -> null);
        }
        catch (final Exception e)
        {
            return CompletableFuture.completedFuture(null);
        }
    }

    /**
     * Commits an entry wherever the leader is: proposed in process when this replica is the ready leader, through the
     * Raft client otherwise. A local leader refuses while it hands its leadership over (a controlled shutdown, a
     * rebalance): the entry then goes through the Raft client, which finds the new leader. Completes with the
     * successful reply; fails with the owner's error for a refusal. The caller bounds the wait.
     */
    public CompletableFuture<RaftClientReply> commit(final Message message)
    {
        final CompletableFuture<RaftClientReply> reply = isReadyLeader() ?
            submitLocal(message).thenCompose((r) -> refusedAsNoLongerLeading(r) ?
                submitThroughClient(message) : CompletableFuture.completedFuture(r)) :
            submitThroughClient(message);
        return reply.thenApply((r) ->
        {
            if (!r.isSuccess())
            {
                throw refusal(r);
            }
            return r;
        });
    }

    /** The owner's error for a reply that is not a success. */
    public RuntimeException refusal(final RaftClientReply reply)
    {
        final NotLeaderException notLeader = reply.getNotLeaderException();
        if (notLeader != null)
        {
            final RaftPeer suggested = notLeader.getSuggestedLeader();
            return refusals.notLeader(suggested == null ? -1 : RaftPeers.brokerIdOf(suggested.getId()), notLeader);
        }
        final LeaderNotReadyException notReady = reply.getLeaderNotReadyException();
        if (notReady != null)
        {
            return refusals.leaderNotReady(notReady);
        }
        return refusals.refused(reply.getException());
    }

    private static boolean refusedAsNoLongerLeading(final RaftClientReply reply)
    {
        return !reply.isSuccess() && (reply.getNotLeaderException() != null ||
            reply.getException() instanceof LeaderSteppingDownException ||
            reply.getLeaderNotReadyException() != null);
    }

    // ------------------------------------------------------------------------------------------- admin

    /**
     * Asks this replica's Raft server to hand the leadership to {@code targetBrokerId}, or to step down when it is
     * negative, within {@code timeoutMs}; completes with Ratis's reply.
     */
    public CompletableFuture<RaftClientReply> transferLeadership(final int targetBrokerId, final long timeoutMs)
    {
        final RaftServer server = this.server;
        if (server == null)
        {
            return CompletableFuture.failedFuture(refusals.unavailable("not started"));
        }
        try
        {
            return server.transferLeadershipAsync(new TransferLeadershipRequest(clientId, selfId, group.getGroupId(),
                callIds.incrementAndGet(), targetBrokerId < 0 ? null : RaftPeers.peerId(targetBrokerId), timeoutMs));
        }
        catch (final Exception e)
        {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Asks this replica to take a snapshot now, whatever the entries since its last. */
    public CompletableFuture<RaftClientReply> snapshotNow(final long timeoutMs)
    {
        final RaftServer server = this.server;
        if (server == null)
        {
            return CompletableFuture.failedFuture(refusals.unavailable("not started"));
        }
        try
        {
            return server.snapshotManagementAsync(SnapshotManagementRequest.newCreate(clientId, selfId,
                group.getGroupId(), callIds.incrementAndGet(), timeoutMs, 1));
        }
        catch (final Exception e)
        {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Closes the Raft client; the division is the server's, which closes it. */
    @Override
    public void close()
    {
        closed = true;
        client.close();
    }

    // ------------------------------------------------------------------------------------------- reopening

    /**
     * Closes this replica's division, keeping its directory: the group goes on with its other members, and
     * {@link #recoverDivision} brings this one back from what it wrote. Blocks until Ratis closed it.
     */
    public void closeDivision() throws IOException
    {
        manage(GroupManagementRequest.newRemove(clientId, selfId, callIds.incrementAndGet(), group.getGroupId(),
            false, false), "close");
    }

    /** Opens this replica's division again from its directory (Ratis recovers the log and snapshot there). */
    public void recoverDivision() throws IOException
    {
        manage(GroupManagementRequest.newAdd(clientId, selfId, callIds.incrementAndGet(), group, false), "open");
    }

    private void manage(final GroupManagementRequest request, final String what) throws IOException
    {
        final RaftServer server = this.server;
        if (server == null)
        {
            throw new IOException("cannot " + what + " the division of " + group.getGroupId() + ": no Raft server yet");
        }
        cachedDivision = null;
        final RaftClientReply reply = server.groupManagement(request);
        cachedDivision = null;
        if (!reply.isSuccess())
        {
            throw new IOException("cannot " + what + " the division of " + group.getGroupId() + ": " +
                reply.getException(), reply.getException());
        }
    }
}
