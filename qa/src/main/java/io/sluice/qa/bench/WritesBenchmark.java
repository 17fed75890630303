package io.sluice.qa.bench;

import io.sluice.qa.cluster.PortAllocator;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.broker.Broker;
import io.sluice.broker.BrokerConfig;
import io.sluice.broker.RaftSettings;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.FileExporter;
import io.sluice.broker.partition.Partition;
import io.sluice.broker.raft.RaftPeers;
import io.sluice.broker.partition.PartitionState;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.codecs.AppendRequestEncoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Committed records/s of 100-byte records through the broker command API on a 3-broker cluster (one
 * partition, RF 3), against a bare Ratis state machine (3 servers, same Ratis settings) fed the same
 * batches in-process on its leader with the same number in flight; plus the file exporter's rate.
 * Ratio: project / bare.
 * <p>
 * {@code -Dsluice.bench.raft-transport=NETTY} runs both on Netty instead of gRPC. The full run then stops one follower
 * of the project's cluster and measures its writes again: Netty's replication once stalled with a follower down.
 */
public final class WritesBenchmark
{
    private static final int RECORD_BYTES = 100;

    private WritesBenchmark()
    {
    }

    public static void main(final String[] args)
    {
        BenchmarkRun.runAndExit("writes", args, WritesBenchmark::measure);
    }

    private static void measure(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start("writes", args);
        final int batch = run.choose("batch_records", 100, 100);
        // 4 in flight: the broker coalesces appends only beyond 4 entries in flight, so both sides batch alike.
        final int window = run.choose("in_flight_batches", 4, 4);
        final int seconds = run.choose("seconds_per_phase", 8, 30);
        final int warmupSeconds = run.choose("warmup_seconds", 3, 8);
        final BrokerConfig.RaftTransport transport = run.raftTransport();
        run.param("record_bytes", RECORD_BYTES).param("brokers", 3)
            .param("replication_factor", 3);

        final Path dir = Files.createTempDirectory("sluice-writes-bench");
        final ClusterTls tls = run.clusterTls();
        try (Side bare = bare(dir.resolve("bare"), transport, batch, tls);
            Side project = project(dir.resolve("project"), transport, batch, false, tls);
            Side projectIds = project(dir.resolve("project-ids"), transport, batch, true, tls))
        {
            // The clusters run side by side and take turns, so background load hits all alike.
            drive(run, "bare warmup", bare, window, warmupSeconds);
            drive(run, "project warmup", project, window, warmupSeconds);
            drive(run, "project with ids warmup", projectIds, window, warmupSeconds);
            double idsRecords = 0;
            double idsSeconds = 0;
            final int sliceSeconds = 2;
            final int rounds = Math.max(1, seconds / sliceSeconds);
            double bareRecords = 0;
            double bareSeconds = 0;
            double projectRecords = 0;
            double projectSeconds = 0;
            long exported = 0;
            for (int round = 0; round < rounds; round++)
            {
                final double[] b = drive(run, "bare round " + round, bare, window, sliceSeconds);
                bareRecords += b[0];
                bareSeconds += b[1];
                final long exportedBefore = project.exportedPosition();
                final double[] p = drive(run, "project round " + round, project, window, sliceSeconds);
                projectRecords += p[0];
                projectSeconds += p[1];
                exported += project.exportedPosition() - exportedBefore;
                final double[] i = drive(run, "project with ids round " + round, projectIds, window, sliceSeconds);
                idsRecords += i[0];
                idsSeconds += i[1];
            }
            // The exporter's backlog drains on its own; count it with the time it takes.
            final long drainStartNs = System.nanoTime();
            final long exportedBeforeDrain = project.exportedPosition();
            final long deadline = drainStartNs + TimeUnit.SECONDS.toNanos(120);
            while (project.exportedPosition() < project.lastPosition() && System.nanoTime() < deadline)
            {
                Thread.sleep(10);
            }
            exported += project.exportedPosition() - exportedBeforeDrain;
            final double exportSeconds = projectSeconds + (System.nanoTime() - drainStartNs) / 1e9;

            final double bareRate = bareRecords / bareSeconds;
            final double projectRate = projectRecords / projectSeconds;
            final double exportRate = exported / exportSeconds;
            run.log("bare Ratis %.0f records/s, project %.0f records/s, file export %.0f records/s",
                bareRate, projectRate, exportRate);
            run.result("project_records_per_s", Math.round(projectRate))
                .result("bare_ratis_records_per_s", Math.round(bareRate))
                .result("export_records_per_s", Math.round(exportRate))
                .result("project_with_ids_records_per_s", Math.round(idsRecords / idsSeconds))
                .result("ids_over_plain", (idsRecords / idsSeconds) / projectRate)
                .ratio(projectRate / bareRate);
            if (!run.quick())
            {
                // A follower down (stopped, its peers keep trying to reach it): what chose the Raft transport.
                project.stopOneFollower();
                drive(run, "project, one follower down, warmup", project, window, warmupSeconds);
                final double[] down = drive(run, "project, one follower down", project, window, seconds);
                run.log("project with one follower down %.0f records/s", down[0] / down[1]);
                run.result("project_one_follower_down_records_per_s", Math.round(down[0] / down[1]))
                    .result("follower_down_over_all_up", (down[0] / down[1]) / projectRate);
            }
            run.finish();
        }
        finally
        {
            SluiceCluster.deleteRecursively(dir);
        }
    }

    /** One system under load: sends one batch at a time within the window. */
    private interface Side extends AutoCloseable
    {
        void sendOne(Semaphore window, AtomicLong committed);

        default long exportedPosition()
        {
            return 0;
        }

        default long lastPosition()
        {
            return 0;
        }

        /** Stops one broker that does not lead, as a crash would (no handover). */
        default void stopOneFollower()
        {
            throw new UnsupportedOperationException();
        }

        @Override
        void close() throws Exception;
    }

    // ------------------------------------------------------------------------------------------- project

    /** @param withIds whether every request carries its own idempotency id (as the gateway sends them, issue 14). */
    private static Side project(
        final Path dataDir, final BrokerConfig.RaftTransport transport, final int batch, final boolean withIds,
        final ClusterTls tls)
        throws Exception
    {
        final PartitionDistribution distribution = new PartitionDistribution(PartitionDistribution.parseAddresses(PortAllocator.loopbackBrokerList(3)), 1, 3);
        final Map<String, ExporterConfig> exporters = Map.of(FileExporter.TYPE,
            new ExporterConfig(FileExporter.TYPE, FileExporter.TYPE, Map.of()));
        final List<Broker> brokers = new ArrayList<>();
        final TransportClient client = new TransportClient(TransportConfig.defaults(), tls);
        for (int b = 0; b < 3; b++)
        {
            // The load goes to the leader found now, as on the bare side: automatic balance moving it a few seconds
            // after the start would leave the measured side writing to a follower.
            brokers.add(Broker.start(BrokerConfig.of(b, distribution, dataDir, exporters).withRaftTransport(transport)
                .withAutoRebalance(false), tls));
        }
        final int leader = awaitLeader(brokers);
        final InetSocketAddress address = new InetSocketAddress("127.0.0.1",
            distribution.commandAddress(leader).getPort());
        final MessageWriter plainRequest = appendRequest(batch);
        final PartitionState state = brokers.get(leader).partition(1).state();
        final AtomicLong ids = new AtomicLong();
        return new Side()
        {
            public void sendOne(final Semaphore window, final AtomicLong committed)
            {
                window.acquireUninterruptibly();
                final MessageWriter request = withIds ? withId(plainRequest, ids.incrementAndGet()) : plainRequest;
                client.send(address, request, Duration.ofSeconds(30)).whenComplete((response, error) ->
                {
                    window.release();
                    if (error == null && AppendRequests.isAppended(response))
                    {
                        committed.addAndGet(batch);
                    }
                });
            }

            public long exportedPosition()
            {
                return state.exportedPosition();
            }

            public long lastPosition()
            {
                return state.lastPosition();
            }

            public void stopOneFollower()
            {
                brokers.get((leader + 1) % brokers.size()).halt();
            }

            public void close()
            {
                client.close();
                brokers.forEach(Broker::close);
            }
        };
    }

    /** The request with an idempotency id of its own: a 10-minute window, as for a client's key. */
    private static MessageWriter withId(final MessageWriter request, final long id)
    {
        final byte[] bytes = new byte[request.encodedLength()];
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        request.write(buffer, 0);
        final int block = MessageHeaderEncoder.ENCODED_LENGTH;
        buffer.putLong(block + AppendRequestEncoder.idempotencyWindowMsEncodingOffset(), 600_000L, ByteOrder.LITTLE_ENDIAN);
        buffer.putByte(block + AppendRequestEncoder.idempotencyScopeEncodingOffset(), (byte)1);
        buffer.putLong(block + AppendRequestEncoder.idHighEncodingOffset(), id * 0x9E3779B97F4A7C15L, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(block + AppendRequestEncoder.idLowEncodingOffset(), id, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(block + AppendRequestEncoder.bodyDigestEncodingOffset(), 7L, ByteOrder.LITTLE_ENDIAN);
        return MessageWriter.of(buffer, 0, bytes.length);
    }

    private static int awaitLeader(final List<Broker> brokers) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline)
        {
            for (final Broker broker : brokers)
            {
                final Partition partition = broker.partition(1);
                if (partition.status().role() == PartitionRole.LEADER && partition.director().isActive())
                {
                    return broker.nodeId();
                }
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("no leader of partition 1 within 60 s");
    }

    private static MessageWriter appendRequest(final int batch)
    {
        final byte[] payload = ("{\"v\":\"" + "x".repeat(RECORD_BYTES - 8) + "\"}").getBytes();
        return AppendRequests.encode(1, batch, RECORD_BYTES, i -> "", i -> payload);
    }

    // ------------------------------------------------------------------------------------------- bare Ratis

    private static Side bare(
        final Path dataDir, final BrokerConfig.RaftTransport transport, final int batch, final ClusterTls tls)
        throws Exception
    {
        final List<InetSocketAddress> addresses = PartitionDistribution.parseAddresses(PortAllocator.loopbackBrokerList(3));
        final PartitionDistribution distribution = new PartitionDistribution(addresses, 1, 3);
        final RaftGroupId groupId = RaftGroupId.valueOf(UUID.nameUUIDFromBytes("bare".getBytes()));
        final List<RaftPeer> peers = new ArrayList<>();
        for (int b = 0; b < 3; b++)
        {
            final InetSocketAddress raft = distribution.raftAddress(b);
            peers.add(RaftPeer.newBuilder().setId(RaftPeers.peerId(b))
                .setAddress(raft.getHostString() + ":" + raft.getPort()).build());
        }
        final RaftGroup group = RaftGroup.valueOf(groupId, peers);
        final List<RaftServer> servers = new ArrayList<>();
        boolean started = false;
        try
        {
            for (int b = 0; b < 3; b++)
            {
                final BrokerConfig config = BrokerConfig.of(b, distribution, dataDir, Map.of()).withRaftTransport(transport);
                final InetSocketAddress raft = distribution.raftAddress(b);
                final RaftServer server = RaftServer.newBuilder()
                    .setServerId(RaftPeers.peerId(b))
                    .setGroup(group)
                    .setStateMachine(new ApplyingStateMachine())
                    .setProperties(RaftSettings.serverProperties(config,
                        new InetSocketAddress(raft.getHostString(), raft.getPort())))
                    .setParameters(RaftSettings.raftTlsParameters(tls, true))
                    .setOption(RaftStorage.StartupOption.FORMAT)
                    .build();
                server.start();
                servers.add(server);
            }
            RaftServer leader = null;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (leader == null && System.nanoTime() < deadline)
            {
                for (final RaftServer server : servers)
                {
                    if (server.getDivision(groupId).getInfo().isLeaderReady())
                    {
                        leader = server;
                    }
                }
                Thread.sleep(50);
            }
            if (leader == null)
            {
                throw new IllegalStateException("bare Ratis group elected no leader within 60 s");
            }
            // The same bytes per entry as the broker's append entry of one batch.
            final byte[] entry = new byte[batch * (RECORD_BYTES + 16) + 12];
            final Message message = Message.valueOf(UnsafeByteOperations.unsafeWrap(entry));
            final RaftServer target = leader;
            final ClientId clientId = ClientId.randomId();
            final AtomicLong callIds = new AtomicLong();
            final Side side = new Side()
            {
              public void sendOne(final Semaphore semaphore, final AtomicLong committed)
              {
                semaphore.acquireUninterruptibly();
                final RaftClientRequest request = RaftClientRequest.newBuilder()
                    .setClientId(clientId).setServerId(target.getId()).setGroupId(groupId)
                    .setCallId(callIds.incrementAndGet()).setMessage(message)
                    .setType(RaftClientRequest.writeRequestType()).build();
                CompletableFuture<RaftClientReply> reply;
                try
                {
                    reply = target.submitClientRequestAsync(request);
                }
                catch (final IOException e)
                {
                    reply = CompletableFuture.failedFuture(e);
                }
                reply.whenComplete((r, error) ->
                {
                    semaphore.release();
                    if (error == null && r.isSuccess())
                    {
                        committed.addAndGet(batch);
                    }
                });
              }

              public void close() throws IOException
              {
                  for (final RaftServer server : servers)
                  {
                      server.close();
                  }
              }
            };
            started = true;
            return side;
        }
        finally
        {
            if (!started)
            {
                for (final RaftServer server : servers)
                {
                    server.close();
                }
            }
        }
    }


    // ------------------------------------------------------------------------------------------- load

    /** Keeps {@code window} batches in flight for {@code seconds}; returns {records committed, seconds}. */
    private static double[] drive(final BenchmarkRun run, final String phase, final Side side, final int window,
        final int seconds) throws InterruptedException
    {
        final Semaphore semaphore = new Semaphore(window);
        final AtomicLong committed = new AtomicLong();
        final long startNs = System.nanoTime();
        final long endNs = startNs + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < endNs)
        {
            side.sendOne(semaphore, committed);
        }
        semaphore.tryAcquire(window, 30, TimeUnit.SECONDS);
        final double elapsed = (System.nanoTime() - startNs) / 1e9;
        final long counted = committed.get();
        run.log("%s: %d records committed in %.1f s", phase, counted, elapsed);
        return new double[] {counted, elapsed};
    }

}
