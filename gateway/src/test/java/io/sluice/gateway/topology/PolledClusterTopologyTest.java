package io.sluice.gateway.topology;

import io.sluice.gateway.broker.FakeBrokers;
import io.sluice.gateway.broker.SbeBrokerClient;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PolledClusterTopologyTest
{
    private FakeBrokers brokers;
    private PartitionDistribution distribution;
    private SbeBrokerClient client;
    private PolledClusterTopology topology;

    @BeforeEach
    void start()
    {
        brokers = new FakeBrokers(3);
        distribution = PartitionDistribution.of(brokers.addresses(), 3, 3);
        client = new SbeBrokerClient(new TransportClient(TransportConfig.defaults()), distribution,
            partitionId -> OptionalInt.empty(), true);
        topology = new PolledClusterTopology(distribution, client, Duration.ofMillis(100), Duration.ofMillis(500));
    }

    @AfterEach
    void stop()
    {
        topology.close();
        client.close();
        brokers.close();
    }

    @Test
    void knowsEveryPairBeforeAnyBrokerAnswers()
    {
        brokers.close();
        topology.start();

        assertThat(topology.distribution().replicas()).hasSize(9);
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> !topology.isReachable(0));
        assertThat(topology.status(new PartitionReplica(0, 1))).isEmpty();
        assertThat(topology.leaderOf(1)).isEmpty();
        assertThat(topology.unreachableReason(0)).isPresent();
    }

    @Test
    void leaderIsTheReachableReplicaReportingLeaderWithTheHighestTerm()
    {
        brokers.lead(0, 1, 3);
        brokers.lead(1, 1, 5);
        brokers.follow(2, 1, 5);
        topology.start();

        await().atMost(Duration.ofSeconds(10)).until(() -> topology.leaderOf(1).equals(OptionalInt.of(1)));
        assertThat(topology.status(new PartitionReplica(2, 1)).orElseThrow().role()).isEqualTo(PartitionRole.FOLLOWER);
    }

    @Test
    void closedBrokerIsUnreachableWithinSecondsAndItsLeadershipForgotten() throws Exception
    {
        brokers.lead(0, 1, 2);
        brokers.follow(1, 1, 2);
        topology.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> topology.leaderOf(1).equals(OptionalInt.of(0)));

        brokers.broker(0).close();
        final long closed = System.nanoTime();

        await().atMost(Duration.ofSeconds(5)).until(() -> !topology.isReachable(0));
        assertThat(Duration.ofNanos(System.nanoTime() - closed)).isLessThan(Duration.ofSeconds(5));
        assertThat(topology.leaderOf(1)).isEmpty();
        assertThat(topology.status(new PartitionReplica(1, 1))).isPresent();
    }

    @Test
    void closedBrokerIsKnownDownButAHungOneIsOnlyUnreachable() throws Exception
    {
        brokers.lead(0, 1, 2);
        brokers.follow(1, 1, 2);
        topology.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> topology.isReachable(0) && topology.isReachable(1));

        brokers.silence(1);
        brokers.broker(0).close();

        await().atMost(Duration.ofSeconds(10)).until(() -> !topology.isReachable(0) && !topology.isReachable(1));
        await().atMost(Duration.ofSeconds(10)).until(() -> topology.isKnownDown(0));
        // A hung broker still holds its connection: requests to it must be sent and time out, not fail at once.
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> !topology.isKnownDown(1));
    }

    @Test
    void aBrokerStillStartingIsUnreachableAndKnownDownWithItsReasonUntilItServes()
    {
        brokers.starting(0);
        brokers.lead(1, 1, 2);
        topology.start();

        await().atMost(Duration.ofSeconds(10)).until(() -> topology.isReachable(1) && topology.isKnownDown(0));
        assertThat(topology.isReachable(0)).isFalse();
        assertThat(topology.unreachableReason(0)).hasValueSatisfying((reason) ->
            assertThat(reason).contains("broker 0 is starting (recovering its 4 Raft groups)"));
        assertThat(topology.status(new PartitionReplica(0, 1))).isEmpty();

        brokers.lead(0, 1, 3);
        brokers.serving(0);
        await().atMost(Duration.ofSeconds(10)).until(() -> topology.isReachable(0) && !topology.isKnownDown(0));
        assertThat(topology.leaderOf(1)).isEqualTo(OptionalInt.of(0));
    }

    @Test
    void aBrokerDownIsAskedAgainSoonSoItsStartIsSeenWithoutWaitingForTheInterval()
    {
        topology.close();
        // An hour between polls of a reachable broker: only the fast polls of a down one can see it start serving.
        topology = new PolledClusterTopology(distribution, client, Duration.ofHours(1), Duration.ofMillis(500));
        brokers.starting(0);
        brokers.lead(1, 1, 2);
        brokers.follow(2, 1, 2);
        topology.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> topology.isReachable(1) && topology.isKnownDown(0));

        brokers.lead(0, 1, 3);
        brokers.serving(0);

        await().atMost(Duration.ofSeconds(10)).until(() -> topology.isReachable(0));
        assertThat(topology.leaderOf(1)).isEqualTo(OptionalInt.of(0));
        // Brokers that answered are asked at the (hour-long) interval, not at the down brokers' pace.
        assertThat(brokers.topologiesAnswered(1)).isEqualTo(1);
        assertThat(brokers.topologiesAnswered(2)).isEqualTo(1);
    }

    @Test
    void aBrokerBecomingReachableIsToldOnceEachTimeNotAtEveryPoll()
    {
        final java.util.Queue<Integer> told = new java.util.concurrent.ConcurrentLinkedQueue<>();
        topology.onReachable(told::add);
        brokers.lead(0, 1, 2);
        brokers.follow(1, 1, 2);
        brokers.follow(2, 1, 2);
        topology.start();

        await().atMost(Duration.ofSeconds(10)).until(() -> told.size() == 3);
        // Several polls at 100 ms: a broker that stays reachable is not told of again.
        await().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(2)).until(() -> told.size() == 3);
        assertThat(told).containsExactlyInAnyOrder(0, 1, 2);

        brokers.starting(0);
        await().atMost(Duration.ofSeconds(10)).until(() -> topology.isKnownDown(0));
        brokers.serving(0);
        await().atMost(Duration.ofSeconds(10)).until(() -> told.size() == 4);
        assertThat(told).containsExactlyInAnyOrder(0, 1, 2, 0);
    }
}
