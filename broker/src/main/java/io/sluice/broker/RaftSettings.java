package io.sluice.broker;

import io.sluice.protocol.message.AppendLimits;
import io.sluice.protocol.tls.ClusterTls;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How a broker sets Ratis up: its server's settings, its clients', the TLS parameters of both, and the groups a fresh
 * data directory is given. Public for the benchmarks, which run a bare Ratis state machine under exactly these
 * settings.
 */
public final class RaftSettings
{
    private RaftSettings()
    {
    }

    /**
     * The Ratis server settings a broker runs with (public so benchmarks can run a bare Ratis state machine
     * under exactly the same settings).
     */
    public static RaftProperties serverProperties(final BrokerConfig config, final InetSocketAddress raftAddress)
    {
        final RaftProperties properties = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(properties, List.of(config.brokerDir().resolve("raft").toFile()));
        if (config.raftTransport() == BrokerConfig.RaftTransport.NETTY)
        {
            RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.NETTY);
            NettyConfigKeys.Server.setHost(properties, raftAddress.getHostString());
            NettyConfigKeys.Server.setPort(properties, raftAddress.getPort());
        }
        else
        {
            RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.GRPC);
            GrpcConfigKeys.Server.setHost(properties, raftAddress.getHostString());
            GrpcConfigKeys.Server.setPort(properties, raftAddress.getPort());
            GrpcConfigKeys.Server.setAsyncRequestThreadPoolCached(properties, false);
            GrpcConfigKeys.Server.setAsyncRequestThreadPoolSize(properties, 4);
        }
        // Elections: 1-2 s keeps leaders stable when the CPU is saturated. A leader heartbeats every follower of every
        // group at half the minimum (500 ms): a sixth of what Ratis's default 150 ms costs an idle cluster (bash
        // qa/bench.sh idle measures both). Ratis's separate heartbeat stream stays on: without it a heartbeat
        // queues behind a large append on a loaded machine, and it saved no CPU beyond the noise there.
        RaftServerConfigKeys.Rpc.setTimeoutMin(properties, duration(config.electionTimeoutMin()));
        RaftServerConfigKeys.Rpc.setTimeoutMax(properties, duration(config.electionTimeoutMax()));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(properties, duration(config.electionTimeoutMin()));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(properties, duration(config.electionTimeoutMax()));
        RaftServerConfigKeys.Rpc.setRequestTimeout(properties, TimeDuration.valueOf(3, TimeUnit.SECONDS));
        // Ratis waits 10 ms by default before sending new entries, and a follower learns the commit index only
        // with the next send: every admin change paid it twice. Writes batch above Raft (AppendBatcher), so they
        // do not need the wait to batch.
        RaftServerConfigKeys.Log.Appender.setWaitTimeMin(properties, TimeDuration.valueOf(1, TimeUnit.MILLISECONDS));
        // Fast appender retries: a restarted follower catches up in a fraction of a second.
        RaftServerConfigKeys.Log.Appender.setRetryPolicy(properties, "1ms,10,100ms,100000");
        // Direct memory per group: the appender's byte limit is also the largest entry Raft can send, so it holds the
        // largest entry a partition proposes (AppendLimits: one client batch of keys, payloads and headers); the
        // write buffer holds one entry with its length and checksum. Smaller, a 1 MiB record never replicates
        // and its leader is voted out over and over.
        // Raft log segments follow the record log's (only closed segments are purged), within 256 KiB..32 MiB.
        final long raftSegmentBytes = Math.max(256 * 1024, Math.min(32L * 1024 * 1024, config.segmentSizeBytes()));
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(properties, SizeInBytes.valueOf(AppendLimits.MAX_ENTRY_BYTES));
        RaftServerConfigKeys.Log.setWriteBufferSize(properties, maxLogEntry());
        RaftServerConfigKeys.Log.setSegmentSizeMax(properties, SizeInBytes.valueOf(raftSegmentBytes));
        RaftServerConfigKeys.Log.setPreallocatedSize(properties, SizeInBytes.valueOf(Math.min(1024 * 1024, raftSegmentBytes)));
        RaftServerConfigKeys.Log.setSegmentCacheNumMax(properties, 2);
        RaftServerConfigKeys.Log.Appender.setSnapshotChunkSizeMax(properties, SizeInBytes.valueOf("1MB"));
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(properties, true);
        // Snapshots seal and compact the record log; Raft then purges its own log up to them.
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(properties, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(properties, config.snapshotThresholdEntries());
        RaftServerConfigKeys.Snapshot.setCreationGap(properties, Math.min(1024, config.snapshotThresholdEntries()));
        RaftServerConfigKeys.Log.setPurgeGap(properties, (int)Math.min(1024, config.snapshotThresholdEntries()));
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(properties, true);
        return properties;
    }

    /** The largest Raft log entry a broker writes, with its length and checksum: Ratis's write buffer holds one. */
    public static SizeInBytes maxLogEntry()
    {
        return SizeInBytes.valueOf(AppendLimits.MAX_ENTRY_BYTES + 64 * 1024);
    }

    /**
     * Ratis's gRPC TLS settings from the cluster's reloading key and trust managers (so replaced files are used by
     * new connections), with client certificates required; empty parameters when TLS is off. A server's own
     * client and admin channels present the same certificate.
     */
    public static Parameters raftTlsParameters(final ClusterTls tls, final boolean server)
    {
        final Parameters parameters = new Parameters();
        if (tls == null)
        {
            return parameters;
        }
        final GrpcTlsConfig conf = new GrpcTlsConfig(tls.keyManager(), tls.trustManager(), true);
        GrpcConfigKeys.TLS.setConf(parameters, conf);
        GrpcConfigKeys.Client.setTlsConf(parameters, conf);
        GrpcConfigKeys.Admin.setTlsConf(parameters, conf);
        if (server)
        {
            GrpcConfigKeys.Server.setTlsConf(parameters, conf);
        }
        return parameters;
    }

    static RaftProperties clientProperties(final BrokerConfig config)
    {
        final RaftProperties properties = new RaftProperties();
        RaftConfigKeys.Rpc.setType(properties, config.raftTransport() == BrokerConfig.RaftTransport.NETTY ?
            SupportedRpcType.NETTY : SupportedRpcType.GRPC);
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties, TimeDuration.valueOf(3, TimeUnit.SECONDS));
        return properties;
    }

    private static TimeDuration duration(final java.time.Duration duration)
    {
        return TimeDuration.valueOf(duration.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Adds the groups a fresh data directory does not hold yet (on restart Ratis recovers every group by itself);
     * {@code groups} names each for the error.
     */
    static void addGroups(final RaftServer server, final int nodeId, final Map<RaftGroup, String> groups)
        throws IOException
    {
        final List<RaftGroupId> existing = new ArrayList<>();
        server.getGroupIds().forEach(existing::add);
        final ClientId clientId = ClientId.randomId();
        final AtomicLong callId = new AtomicLong();
        for (final Map.Entry<RaftGroup, String> group : groups.entrySet())
        {
            if (existing.contains(group.getKey().getGroupId()))
            {
                continue;
            }
            final RaftClientReply reply = server.groupManagement(GroupManagementRequest.newAdd(
                clientId, server.getId(), callId.incrementAndGet(), group.getKey()));
            if (!reply.isSuccess())
            {
                throw new IOException("broker " + nodeId + ": cannot add the Raft group of " + group.getValue() + ": " +
                    reply.getException());
            }
        }
    }
}
