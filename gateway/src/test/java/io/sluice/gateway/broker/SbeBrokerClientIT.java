package io.sluice.gateway.broker;

import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.transport.PeerUnreachableException;
import io.sluice.protocol.transport.RequestTimeoutException;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SbeBrokerClientIT
{
    private final List<FakeBroker> brokers = new ArrayList<>();
    private PartitionDistribution distribution;
    private SbeBrokerClient client;
    private volatile OptionalInt knownLeader = OptionalInt.empty();

    @BeforeEach
    void startBrokers()
    {
        for (int b = 0; b < 3; b++)
        {
            brokers.add(new FakeBroker(b));
        }
        distribution = PartitionDistribution.of(
            String.join(",", brokers.stream().map(FakeBroker::address).toList()), 3, 3);
        client = new SbeBrokerClient(new TransportClient(TransportConfig.defaults()), distribution,
            partitionId -> knownLeader, true);
    }

    @AfterEach
    void stop()
    {
        client.close();
        brokers.forEach(FakeBroker::close);
    }

    @Test
    void appendFollowsNotLeaderHintToTheLeader() throws Exception
    {
        brokers.get(2).leading.put(1, true);
        brokers.get(0).leaderHints.put(1, 2);
        brokers.get(1).leaderHints.put(1, 2);
        knownLeader = OptionalInt.of(0);

        final AppendResult result = client.append(1, records(3), Duration.ofSeconds(5)).get();

        assertThat(result.partitionId()).isEqualTo(1);
        assertThat(result.firstPosition()).isEqualTo(1);
        assertThat(result.count()).isEqualTo(3);
        assertThat(brokers.get(0).appendsReceived.get()).isEqualTo(1);
        assertThat(brokers.get(2).appendsReceived.get()).isEqualTo(1);
    }

    @Test
    void appendWalksReplicasWhenNoLeaderIsKnown() throws Exception
    {
        brokers.get(1).leading.put(2, true);

        final AppendResult result = client.append(2, records(1), Duration.ofSeconds(5)).get();

        assertThat(result.count()).isEqualTo(1);
        assertThat(brokers.get(1).appendsReceived.get()).isEqualTo(1);
    }

    @Test
    void appendRetriesPastAnUnreachableLeader() throws Exception
    {
        brokers.get(0).close();
        brokers.get(1).leading.put(1, true);
        knownLeader = OptionalInt.of(0);

        final AppendResult result = client.append(1, records(2), Duration.ofSeconds(5)).get();

        assertThat(result.count()).isEqualTo(2);
    }

    @Test
    void appendMovesOnFromAHungLeaderBeforeTheDeadline() throws Exception
    {
        brokers.get(0).mode = FakeBroker.Mode.SILENT;
        brokers.get(0).leading.put(1, true);
        brokers.get(1).leading.put(1, true);
        knownLeader = OptionalInt.of(0);

        // The hung leader's attempt gets half the deadline (1.5 s), which it waits out; its successor the rest.
        final AppendResult result = client.append(1, records(1), Duration.ofSeconds(3)).get();

        assertThat(result.count()).isEqualTo(1);
        assertThat(brokers.get(1).appendsReceived.get()).isEqualTo(1);
    }

    @Test
    void theRetryAfterATimedOutAttemptCarriesTheSameAppendId() throws Exception
    {
        brokers.get(0).mode = FakeBroker.Mode.SILENT;
        brokers.get(0).leading.put(1, true);
        brokers.get(1).leading.put(1, true);
        knownLeader = OptionalInt.of(0);
        final AppendId id = AppendId.of(AppendId.GATEWAY, "request-7", 0, 0, 30_000);

        final AppendResult result = client.append(1, records(1), id, Duration.ofSeconds(3)).get();

        assertThat(result.count()).isEqualTo(1);
        assertThat(brokers.get(0).appendIds).as("the attempt that timed out").containsExactly(id.high());
        assertThat(brokers.get(1).appendIds).as("the retry, elsewhere").containsExactly(id.high());
    }

    @Test
    void appendWithoutLeaderFailsAtTheDeadlineNamingThePartition()
    {
        final long started = System.nanoTime();
        assertThatThrownBy(() -> client.append(3, records(1), Duration.ofMillis(800)).get())
            .isInstanceOf(ExecutionException.class)
            .cause().isInstanceOf(RequestTimeoutException.class)
            .hasMessageContaining("partition 3");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isBetween(Duration.ofMillis(700), Duration.ofSeconds(10));
        assertThat(brokers.stream().mapToInt(b -> b.appendsReceived.get()).sum()).isGreaterThan(3);
    }

    @Test
    void garbageAnswerFailsCleanly()
    {
        brokers.get(0).mode = FakeBroker.Mode.GARBAGE;

        assertThatThrownBy(() -> client.topology(0, Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS))
            .cause().isInstanceOf(MalformedResponseException.class).hasMessageContaining("broker 0");
        assertThatThrownBy(() -> client.admin(new PartitionReplica(0, 1),
            AdminOperation.ofPartition(AdminRequestKind.PAUSE_EXPORTING, 1, true, 1), Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS))
            .cause().isInstanceOf(MalformedResponseException.class);
    }

    @Test
    void silentBrokerTimesOutAtTheDeadline()
    {
        brokers.get(1).mode = FakeBroker.Mode.SILENT;

        assertThatThrownBy(() -> client.topology(1, Duration.ofMillis(300)).get(10, TimeUnit.SECONDS))
            .cause().isInstanceOf(RequestTimeoutException.class);
    }

    @Test
    void adminGoesToExactlyTheNamedPairWithoutRetry() throws Exception
    {
        final AdminResult result = client.admin(new PartitionReplica(2, 1),
            AdminOperation.ofPartition(AdminRequestKind.PAUSE_EXPORTING, 42, true, 1), Duration.ofSeconds(5)).get();

        assertThat(result.replica()).isEqualTo(new PartitionReplica(2, 1));
        assertThat(result.state()).isEqualTo(ExportingState.PAUSED);
        assertThat(result.version()).isEqualTo(42);
        assertThat(result.exportedPosition()).isEqualTo(7);
        assertThat(result.lastPosition()).isEqualTo(9);
        assertThat(brokers.get(2).adminsReceived.get()).isEqualTo(1);
        assertThat(brokers.get(2).lastLeaderTargeted).isEqualTo(BooleanType.TRUE);
        assertThat(brokers.get(0).adminsReceived.get() + brokers.get(1).adminsReceived.get()).isZero();

        brokers.get(0).close();
        assertThatThrownBy(() -> client.admin(new PartitionReplica(0, 1),
            AdminOperation.ofPartition(AdminRequestKind.RESUME_EXPORTING, 43, false, 1), Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS))
            .cause().isInstanceOf(PeerUnreachableException.class);
    }

    @Test
    void adminToAPairOutsideTheDistributionIsRefusedWithoutSending()
    {
        final PartitionDistribution small = PartitionDistribution.of(
            String.join(",", brokers.stream().map(FakeBroker::address).toList()), 3, 1);
        try (SbeBrokerClient narrow = new SbeBrokerClient(
            new TransportClient(TransportConfig.defaults()), small, LeaderLookup.NONE, true))
        {
            assertThatThrownBy(() -> narrow.admin(new PartitionReplica(1, 1),
                AdminOperation.ofPartition(AdminRequestKind.PAUSE_EXPORTING, 1, false, 1), Duration.ofSeconds(1)).get())
                .cause().isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partition 1 on broker 1");
        }
        assertThat(brokers.get(1).adminsReceived.get()).isZero();
    }

    @Test
    void topologyDecodesEveryPartitionAndExporter() throws Exception
    {
        brokers.get(0).leading.put(1, true);
        brokers.get(0).leading.put(3, false);
        brokers.get(0).leaderHints.put(3, 2);
        brokers.get(0).term = 4;

        final BrokerTopology topology = client.topology(0, Duration.ofSeconds(5)).get();

        assertThat(topology.brokerId()).isZero();
        assertThat(topology.partitions()).hasSize(2);
        final PartitionStatus p1 = topology.partitions().stream()
            .filter(p -> p.partitionId() == 1).findFirst().orElseThrow();
        assertThat(p1.role()).isEqualTo(PartitionRole.LEADER);
        assertThat(p1.term()).isEqualTo(4);
        assertThat(p1.exporterPositions()).containsEntry("file", 0L);
        final PartitionStatus p3 = topology.partitions().stream()
            .filter(p -> p.partitionId() == 3).findFirst().orElseThrow();
        assertThat(p3.role()).isEqualTo(PartitionRole.FOLLOWER);
        assertThat(p3.leaderId()).isEqualTo(2);
    }

    private static List<RecordToAppend> records(final int count)
    {
        final List<RecordToAppend> records = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            records.add(new RecordToAppend("key-" + i, 1000 + i, ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
        }
        return records;
    }
}
