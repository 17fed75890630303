package io.sluice.broker;

import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.FileExporter;
import io.sluice.broker.partition.Partition;
import io.sluice.broker.raft.RaftPeers;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.codecs.AdminRequestEncoder;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.AdminResponseDecoder;
import io.sluice.protocol.codecs.AppendRequestEncoder;
import io.sluice.protocol.codecs.AppendResponseDecoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.OperationScope;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.codecs.TopologyRequestEncoder;
import io.sluice.protocol.codecs.TopologyResponseDecoder;
import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import io.sluice.testing.LoopbackPorts;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;

/**
 * Real brokers in this JVM on free loopback ports, talking to them through the real transport client. Every
 * wait is bounded. Keeps the data folder of a failed run (it lives under target/).
 */
final class TestCluster implements AutoCloseable
{
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
    private static final Pattern LINE = Pattern.compile(
        "\\{\"partitionId\":(\\d+),\"position\":(\\d+),\"key\":(null|\"[^\"]*\"),\"timestamp\":(\\d+),\"payload\":(.*)}");

    final Path dataDir;
    final PartitionDistribution distribution;
    final Broker[] brokers;
    final TransportClient client = new TransportClient(TransportConfig.defaults());
    private final UnaryOperator<BrokerConfig> tuning;

    TestCluster(final Path dataDir, final int brokerCount, final int partitionCount, final int replicationFactor,
        final UnaryOperator<BrokerConfig> tuning)
    {
        this.dataDir = dataDir;
        this.tuning = tuning;
        this.distribution = new PartitionDistribution(freeAddresses(brokerCount), partitionCount, replicationFactor);
        this.brokers = new Broker[brokerCount];
    }

    static TestCluster start(final Path dataDir, final int brokers, final int partitions, final int rf) throws IOException
    {
        return start(dataDir, brokers, partitions, rf, UnaryOperator.identity());
    }

    static TestCluster start(final Path dataDir, final int brokers, final int partitions, final int rf,
        final UnaryOperator<BrokerConfig> tuning) throws IOException
    {
        final TestCluster cluster = new TestCluster(dataDir, brokers, partitions, rf, tuning);
        for (int i = 0; i < brokers; i++)
        {
            cluster.startBroker(i);
        }
        return cluster;
    }

    /**
     * A cluster its class's tests share (each on partitions, keys and exporter ids of its own), started with every
     * partition led. Automatic balance is off so no leadership moves by itself between or during the tests (it would
     * otherwise bring each partition to its preferred broker seconds after the start, under a running test).
     */
    static TestCluster startShared(final Path dataDir, final int brokers, final int partitions, final int rf,
        final UnaryOperator<BrokerConfig> tuning) throws IOException
    {
        final TestCluster cluster = start(dataDir, brokers, partitions, rf, (c) -> tuning.apply(c).withAutoRebalance(false));
        for (int p = 1; p <= partitions; p++)
        {
            cluster.awaitLeader(p);
        }
        return cluster;
    }

    BrokerConfig config(final int nodeId)
    {
        return tuning.apply(BrokerConfig.of(nodeId, distribution, dataDir, Map.of(FileExporter.TYPE,
            new ExporterConfig(FileExporter.TYPE, FileExporter.TYPE, Map.of()))));
    }

    Broker startBroker(final int nodeId) throws IOException
    {
        brokers[nodeId] = Broker.start(config(nodeId));
        return brokers[nodeId];
    }

    /**
     * Starts a broker whose start runs {@code whileStarting} once its command port listens, before it recovers its Raft
     * groups (a test holds the start there).
     */
    Broker startBroker(final int nodeId, final Runnable whileStarting) throws IOException
    {
        brokers[nodeId] = Broker.start(config(nodeId), null,
            new io.sluice.protocol.backup.FilesystemBackupStore(dataDir.resolve("backups")), whileStarting);
        return brokers[nodeId];
    }

    /** Starts a broker with cluster TLS (its command port then serves TLS clients only). */
    Broker startBroker(final int nodeId, final ClusterTls tls) throws IOException
    {
        brokers[nodeId] = Broker.start(config(nodeId), tls);
        return brokers[nodeId];
    }

    void stopBroker(final int nodeId)
    {
        if (brokers[nodeId] != null)
        {
            brokers[nodeId].close();
            brokers[nodeId] = null;
        }
    }

    /** Stops the broker without handing its leaderships over, as a crash would (see {@link Broker#halt()}). */
    void crashBroker(final int nodeId)
    {
        if (brokers[nodeId] != null)
        {
            brokers[nodeId].halt();
            brokers[nodeId] = null;
        }
    }

    void stopAll()
    {
        for (int i = 0; i < brokers.length; i++)
        {
            stopBroker(i);
        }
    }

    /**
     * Teardown, not a test step: the brokers halt together instead of handing their leaderships over one after the
     * other (a controlled stop of the last brokers waits out handovers nobody can take, seconds per cluster). Tests
     * that mean a controlled stop call {@link #stopBroker} or {@link #stopAll} themselves.
     */
    @Override
    public void close()
    {
        final List<Thread> halts = new ArrayList<>();
        for (int i = 0; i < brokers.length; i++)
        {
            final Broker broker = brokers[i];
            brokers[i] = null;
            if (broker != null)
            {
                final Thread halt = new Thread(broker::halt, "halt-broker-" + i);
                halt.start();
                halts.add(halt);
            }
        }
        for (final Thread halt : halts)
        {
            try
            {
                halt.join(TimeUnit.SECONDS.toMillis(30));
            }
            catch (final InterruptedException e)
            {
                Thread.currentThread().interrupt();
            }
        }
        client.close();
    }

    // ------------------------------------------------------------------------------------------ leaders

    int awaitLeader(final int partitionId)
    {
        final int[] leader = {-1};
        await("leader of partition " + partitionId).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
            .until(() ->
            {
                leader[0] = leaderOf(partitionId);
                return leader[0] >= 0;
            });
        return leader[0];
    }

    /** Waits until every partition is led by its preferred broker (the first of its placement). */
    void awaitPreferredLeaders()
    {
        await("every partition led by its preferred broker").atMost(Duration.ofSeconds(90))
            .pollInterval(Duration.ofMillis(100)).until(() ->
            {
                for (int p = 1; p <= distribution.partitionCount(); p++)
                {
                    if (leaderOf(p) != distribution.replicasOf(p).get(0))
                    {
                        return false;
                    }
                }
                return true;
            });
    }

    /** The running broker that leads the partition and has its exporters running, or -1. */
    int leaderOf(final int partitionId)
    {
        for (final int b : distribution.replicasOf(partitionId))
        {
            final Broker broker = brokers[b];
            if (broker != null)
            {
                final Partition partition = broker.partition(partitionId);
                if (partition.status().role() == PartitionRole.LEADER && partition.director().isActive())
                {
                    return b;
                }
            }
        }
        return -1;
    }

    /** Moves leadership by raising the target's priority (Ratis moves the leader to the highest priority). */
    void transferLeadership(final int partitionId, final int target) throws IOException
    {
        final Partition partition = brokers[target].partition(partitionId);
        final List<org.apache.ratis.protocol.RaftPeer> peers = new ArrayList<>();
        for (final org.apache.ratis.protocol.RaftPeer peer : partition.group().getPeers())
        {
            peers.add(org.apache.ratis.protocol.RaftPeer.newBuilder(peer)
                .setPriority(peer.getId().equals(RaftPeers.peerId(target)) ? 2 : 1).build());
        }
        try (org.apache.ratis.client.RaftClient raftClient = org.apache.ratis.client.RaftClient.newBuilder()
            .setProperties(new org.apache.ratis.conf.RaftProperties())
            .setRaftGroup(partition.group())
            .build())
        {
            final org.apache.ratis.protocol.RaftClientReply reply = raftClient.admin().setConfiguration(peers);
            if (!reply.isSuccess())
            {
                throw new IOException("setConfiguration failed: " + reply);
            }
        }
    }

    // ------------------------------------------------------------------------------------------ requests

    DirectBuffer send(final int brokerId, final MessageWriter request)
    {
        try
        {
            return client.send(address(brokerId), request, REQUEST_TIMEOUT).get(REQUEST_TIMEOUT.toSeconds() + 5,
                TimeUnit.SECONDS);
        }
        catch (final ExecutionException e)
        {
            throw new AssertionError("request to broker " + brokerId + " failed: " + e.getCause(), e.getCause());
        }
        catch (final Exception e)
        {
            throw new AssertionError("request to broker " + brokerId + " failed: " + e, e);
        }
    }

    InetSocketAddress address(final int brokerId)
    {
        final InetSocketAddress address = distribution.commandAddress(brokerId);
        return new InetSocketAddress(address.getHostString(), address.getPort());
    }

    /** Appends one batch to the partition's leader, following NOT_LEADER until committed; returns first position. */
    long append(final int partitionId, final List<String> keys, final List<String> payloads)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int target = distribution.replicasOf(partitionId).get(0);
        String last = "";
        while (System.nanoTime() < deadline)
        {
            if (brokers[target] == null)
            {
                target = nextReplica(partitionId, target);
                continue;
            }
            final DirectBuffer response;
            try
            {
                response = send(target, appendRequest(partitionId, keys, payloads));
            }
            catch (final AssertionError e)
            {
                last = e.getMessage();
                target = nextReplica(partitionId, target);
                backoff();
                continue;
            }
            final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(response, 0);
            if (header.templateId() == AppendResponseDecoder.TEMPLATE_ID)
            {
                final AppendResponseDecoder decoder = new AppendResponseDecoder()
                    .wrap(response, header.encodedLength(), header.blockLength(), header.version());
                if (decoder.count() != keys.size())
                {
                    throw new AssertionError("appended " + decoder.count() + " of " + keys.size());
                }
                return decoder.firstPosition();
            }
            final ErrorResponseDecoder error = error(response);
            last = error.code() + " " + error.message();
            if (error.code() == ErrorCode.NOT_LEADER && error.leaderId() >= 0 && error.leaderId() != target &&
                brokers[error.leaderId()] != null)
            {
                target = error.leaderId();
            }
            else
            {
                target = error.code() == ErrorCode.NOT_LEADER && error.leaderId() == target ? target :
                    nextReplica(partitionId, target);
                backoff();
            }
        }
        throw new AssertionError("append to partition " + partitionId + " not committed within 60 s: " + last);
    }

    private int nextReplica(final int partitionId, final int current)
    {
        final List<Integer> replicas = distribution.replicasOf(partitionId);
        return replicas.get((replicas.indexOf(current) + 1) % replicas.size());
    }

    /** Appends {@code count} records one batch at a time in batches of {@code batch}; returns positions in order. */
    List<Long> appendRecords(final int partitionId, final int count, final int batch, final String prefix)
    {
        return appendRecords(partitionId, count, batch, prefix, 0);
    }

    /** As above, each payload padded with {@code padding} extra characters. */
    List<Long> appendRecords(final int partitionId, final int count, final int batch, final String prefix,
        final int padding)
    {
        final String pad = "x".repeat(padding);
        final List<Long> positions = new ArrayList<>();
        for (int i = 0; i < count; i += batch)
        {
            final List<String> keys = new ArrayList<>();
            final List<String> payloads = new ArrayList<>();
            for (int j = i; j < Math.min(count, i + batch); j++)
            {
                keys.add(prefix + "-" + j);
                payloads.add("{\"n\":" + j + ",\"p\":\"" + prefix + pad + "\"}");
            }
            final long first = append(partitionId, keys, payloads);
            for (int j = 0; j < keys.size(); j++)
            {
                positions.add(first + j);
            }
        }
        return positions;
    }

    static MessageWriter appendRequest(final int partitionId, final List<String> keys, final List<String> payloads)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        final AppendRequestEncoder encoder = new AppendRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .partitionId(partitionId);
        final AppendRequestEncoder.RecordsEncoder records = encoder.recordsCount(keys.size());
        for (int i = 0; i < keys.size(); i++)
        {
            final byte[] payload = payloads.get(i).getBytes(StandardCharsets.UTF_8);
            records.next().timestamp(1_764_420_000_000L + i).key(keys.get(i) == null ? "" : keys.get(i))
                .putPayload(payload, 0, payload.length);
        }
        return bytes(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    static MessageWriter bytes(final DirectBuffer source, final int length)
    {
        final byte[] copy = new byte[length];
        source.getBytes(0, copy);
        return new MessageWriter()
        {
            public int encodedLength()
            {
                return copy.length;
            }

            public void write(final MutableDirectBuffer buffer, final int offset)
            {
                buffer.putBytes(offset, copy);
            }
        };
    }

    /** An admin request whose sender did not also ask the leader: a follower commits the change at once. */
    static MessageWriter adminRequest(final int brokerId, final int partitionId, final AdminRequestKind kind,
        final long version)
    {
        return adminRequest(brokerId, partitionId, kind, version, false);
    }

    static MessageWriter adminRequest(final int brokerId, final int partitionId, final AdminRequestKind kind,
        final long version, final boolean leaderTargeted)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);
        final AdminRequestEncoder encoder = new AdminRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .brokerId(brokerId).partitionId(partitionId).kind(kind).version(version)
            .leaderTargeted(leaderTargeted ? BooleanType.TRUE : BooleanType.FALSE)
            .operationScope(OperationScope.PARTITION);
        encoder.operationPartitionsCount(0);
        return bytes(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    /** Sends an admin request; returns the decoded answer or throws with the error. */
    AdminResponseDecoder admin(final int brokerId, final int partitionId, final AdminRequestKind kind, final long version)
    {
        final DirectBuffer response = send(brokerId, adminRequest(brokerId, partitionId, kind, version));
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(response, 0);
        if (header.templateId() != AdminResponseDecoder.TEMPLATE_ID)
        {
            final ErrorResponseDecoder error = error(response);
            throw new AssertionError("admin " + kind + " on broker " + brokerId + " partition " + partitionId +
                " failed: " + error.code() + " " + error.message());
        }
        return new AdminResponseDecoder().wrap(response, header.encodedLength(), header.blockLength(), header.version());
    }

    /** Sends the admin request to every replica of every partition (what the gateway does). */
    void adminAll(final AdminRequestKind kind, final long version)
    {
        for (int p = 1; p <= distribution.partitionCount(); p++)
        {
            for (final int b : distribution.replicasOf(p))
            {
                if (brokers[b] != null)
                {
                    admin(b, p, kind, version);
                }
            }
        }
    }

    TopologyResponseDecoder topology(final int brokerId)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);
        final TopologyRequestEncoder encoder = new TopologyRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder()).brokerId(brokerId);
        final DirectBuffer response = send(brokerId, bytes(buffer, MessageHeaderEncoder.ENCODED_LENGTH +
            encoder.encodedLength()));
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(response, 0);
        if (header.templateId() != TopologyResponseDecoder.TEMPLATE_ID)
        {
            throw new AssertionError("topology failed: " + error(response).message());
        }
        return new TopologyResponseDecoder().wrap(response, header.encodedLength(), header.blockLength(),
            header.version());
    }

    static ErrorResponseDecoder error(final DirectBuffer response)
    {
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(response, 0);
        if (header.templateId() != ErrorResponseDecoder.TEMPLATE_ID)
        {
            throw new AssertionError("expected an ErrorResponse, got template " + header.templateId());
        }
        return new ErrorResponseDecoder().wrap(response, header.encodedLength(), header.blockLength(), header.version());
    }

    // ------------------------------------------------------------------------------------------ exports

    record ExportedLine(int partitionId, long position, String key, long timestamp, String payload)
    {
    }

    Path exportFile(final int partitionId)
    {
        return dataDir.resolve("exports").resolve(FileExporter.TYPE).resolve("partition-" + partitionId + ".jsonl");
    }

    /** Every exported line of a partition, in file order. */
    List<ExportedLine> exported(final int partitionId) throws IOException
    {
        final Path file = exportFile(partitionId);
        if (!Files.exists(file))
        {
            return List.of();
        }
        final List<ExportedLine> lines = new ArrayList<>();
        for (final String line : Files.readAllLines(file, StandardCharsets.UTF_8))
        {
            final Matcher m = LINE.matcher(line);
            if (!m.matches())
            {
                throw new AssertionError("malformed export line in " + file + ": " + line);
            }
            final String key = m.group(3).equals("null") ? null : m.group(3).substring(1, m.group(3).length() - 1);
            lines.add(new ExportedLine(Integer.parseInt(m.group(1)), Long.parseLong(m.group(2)), key,
                Long.parseLong(m.group(4)), m.group(5)));
        }
        return lines;
    }

    /** Distinct exported positions, in first-seen order, checking the file never goes back past a gap. */
    Map<Long, ExportedLine> exportedByPosition(final int partitionId) throws IOException
    {
        final Map<Long, ExportedLine> byPosition = new LinkedHashMap<>();
        for (final ExportedLine line : exported(partitionId))
        {
            byPosition.putIfAbsent(line.position(), line);
        }
        return byPosition;
    }

    void awaitExported(final int partitionId, final long lastPosition)
    {
        await("partition " + partitionId + " exported up to " + lastPosition).atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> exportedByPosition(partitionId).containsKey(lastPosition));
    }

    static void deleteRecursively(final Path path) throws IOException
    {
        if (!Files.exists(path))
        {
            return;
        }
        try (Stream<Path> walk = Files.walk(path))
        {
            for (final Path p : walk.sorted(Comparator.reverseOrder()).toList())
            {
                Files.delete(p);
            }
        }
    }

    /** The pause before asking again after a refusal or a failed send (leader moving, broker starting). */
    static void backoff()
    {
        try
        {
            Thread.sleep(100);
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
        }
    }

    private static List<InetSocketAddress> freeAddresses(final int count)
    {
        final List<InetSocketAddress> addresses = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            addresses.add(InetSocketAddress.createUnresolved("127.0.0.1", LoopbackPorts.freePortPair()));
        }
        return addresses;
    }
}
