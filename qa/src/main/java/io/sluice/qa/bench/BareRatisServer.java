package io.sluice.qa.bench;

import io.sluice.broker.BrokerConfig;
import io.sluice.broker.RaftSettings;
import io.sluice.broker.raft.RaftPeers;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.concurrent.CommonPool;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The startup benchmark's baseline (issue 30): a plain Ratis server, run as its own process in place of a stopped
 * broker, that recovers the broker's Raft groups from a copy of its data directory and rejoins the running cluster.
 * Same peer id, Raft address and Ratis settings as the broker ({@link RaftSettings#serverProperties}, the broker's
 * defaults), one {@link ApplyingStateMachine} per group (it applies what it is sent and keeps nothing: no record log,
 * snapshots or exporters to open). No Spring, no command port: {@code main} builds the server and starts it.
 * <p>
 * Arguments: {@code nodeId brokers partitions replicationFactor dataDir} as the cluster's settings name them
 * ({@code brokers} is {@code sluice.cluster.brokers}; {@code dataDir} holds {@code broker-<nodeId>/raft}). Prints one
 * line with its start's phases (ms since the process started), then runs until it is stopped (SIGTERM closes the
 * server).
 */
public final class BareRatisServer
{
    private BareRatisServer()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final long mainAtMs = uptimeMs();
        // As sluice.jar's main does: the common pool's two threads on a 2-CPU host, so the baseline pays what a broker pays.
        CommonPool.raiseParallelismIfSingle();
        final int nodeId = Integer.parseInt(args[0]);
        final PartitionDistribution distribution = new PartitionDistribution(
            PartitionDistribution.parseAddresses(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        final BrokerConfig config = BrokerConfig.of(nodeId, distribution, Path.of(args[4]), Map.of());
        final RaftServer server = RaftServer.newBuilder()
            .setServerId(RaftPeers.peerId(nodeId))
            .setProperties(RaftSettings.serverProperties(config, distribution.raftAddress(nodeId)))
            .setStateMachineRegistry((RaftGroupId groupId) -> new ApplyingStateMachine())
            .setOption(RaftStorage.StartupOption.RECOVER)
            .build();
        final long builtAtMs = uptimeMs();
        server.start();
        final long startedAtMs = uptimeMs();
        int groups = 0;
        for (final RaftGroupId ignored : server.getGroupIds())
        {
            groups++;
        }
        System.out.printf("bare Ratis server %d start: main at %d ms, server built %d ms, started (%d groups recovered, " +
            "RPC server listening on %s) %d ms since the process started%n", nodeId, mainAtMs, builtAtMs, groups,
            distribution.raftAddress(nodeId), startedAtMs);
        System.out.flush();
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            try
            {
                server.close();
            }
            catch (final java.io.IOException e)
            {
                System.out.println("bare Ratis server " + nodeId + ": close failed: " + e);
            }
            stopped.countDown();
        }, "bare-ratis-stop"));
        stopped.await();
    }

    private static long uptimeMs()
    {
        return ManagementFactory.getRuntimeMXBean().getUptime();
    }
}
