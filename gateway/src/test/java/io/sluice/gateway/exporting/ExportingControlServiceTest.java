package io.sluice.gateway.exporting;

import io.sluice.gateway.broker.AdminResult;
import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.transport.PeerUnreachableException;
import io.sluice.protocol.transport.RequestTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.http.HttpStatus;

import java.net.ConnectException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ExportingControlServiceTest
{
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final FakeClusterTopology topology = FakeClusterTopology.threeBrokersSixPartitions();
    private final FakeBrokerClient client = new FakeBrokerClient();
    private final ExportingControlService service = new ExportingControlService(client, topology, TIMEOUT, Clock.systemUTC());

    @Test
    void pauseSucceedsOnEveryPairOfTheDistributionWithOneVersion()
    {
        final ExportingOperationResult result = service.pause(false, Optional.empty()).join();

        assertThat(result.operation()).isEqualTo(ExportingOperation.PAUSE);
        assertThat(result.result()).isEqualTo(ExportingOutcome.SUCCEEDED);
        assertThat(ExportingController.statusOf(result.result())).isEqualTo(HttpStatus.OK);
        assertThat(result.targets()).hasSize(18)
            .allSatisfy(target -> assertThat(target.outcome()).isEqualTo(ExportingOutcome.SUCCEEDED))
            .allSatisfy(target -> assertThat(target.error()).isNull());
        assertThat(result.targets()).extracting(TargetResult::replica)
            .containsExactlyElementsOf(topology.distribution().replicas());
        assertThat(client.calls).hasSize(18)
            .allSatisfy(call -> assertThat(call.kind()).isEqualTo(AdminRequestKind.PAUSE_EXPORTING))
            .allSatisfy(call -> assertThat(call.timeout()).isEqualTo(TIMEOUT));
        assertThat(client.calls.stream().map(FakeBrokerClient.AdminCall::version).distinct()).hasSize(1);
    }

    @Test
    void softPauseAsksForSoftPausedAndResumeForExporting()
    {
        assertThat(service.pause(true, Optional.empty()).join().operation()).isEqualTo(ExportingOperation.SOFT_PAUSE);
        assertThat(client.calls).allSatisfy(call -> assertThat(call.kind()).isEqualTo(AdminRequestKind.SOFT_PAUSE_EXPORTING));
        client.calls.clear();

        final ExportingOperationResult resumed = service.resume(Optional.empty()).join();

        assertThat(resumed.operation()).isEqualTo(ExportingOperation.RESUME);
        assertThat(resumed.result()).isEqualTo(ExportingOutcome.SUCCEEDED);
        assertThat(client.calls).hasSize(18)
            .allSatisfy(call -> assertThat(call.kind()).isEqualTo(AdminRequestKind.RESUME_EXPORTING));
    }

    @Test
    void oneFailedAndOneTimedOutMakeTheOperationFailed()
    {
        final PartitionReplica notLeader = new PartitionReplica(2, 4);
        final PartitionReplica silent = new PartitionReplica(0, 1);
        client.respondWith(call ->
        {
            if (call.target().equals(notLeader))
            {
                return CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.NOT_LEADER, 0, "not leader"));
            }
            if (call.target().equals(silent))
            {
                return CompletableFuture.failedFuture(new RequestTimeoutException("no answer within 5000 ms"));
            }
            return FakeBrokerClient.applied(call);
        });

        final ExportingOperationResult result = service.pause(false, Optional.empty()).join();

        assertThat(result.result()).isEqualTo(ExportingOutcome.FAILED);
        assertThat(ExportingController.statusOf(result.result())).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(outcomeOf(result, notLeader).error()).isEqualTo("partition 4 on broker 2: not leader (leader is 0)");
        assertThat(outcomeOf(result, notLeader).outcome()).isEqualTo(ExportingOutcome.FAILED);
        assertThat(outcomeOf(result, silent).outcome()).isEqualTo(ExportingOutcome.TIMED_OUT);
        assertThat(outcomeOf(result, silent).error()).startsWith("partition 1 on broker 0: no answer within");
        assertThat(result.count(ExportingOutcome.SUCCEEDED)).isEqualTo(16);
    }

    @Test
    void onlyTimeoutsMakeTheOperationTimedOut()
    {
        final PartitionReplica silent = new PartitionReplica(1, 2);
        client.respondWith(call -> call.target().equals(silent) ?
            CompletableFuture.failedFuture(new RequestTimeoutException("deadline passed")) : FakeBrokerClient.applied(call));

        final ExportingOperationResult result = service.resume(Optional.empty()).join();

        assertThat(result.result()).isEqualTo(ExportingOutcome.TIMED_OUT);
        assertThat(ExportingController.statusOf(result.result())).isEqualTo(HttpStatus.GATEWAY_TIMEOUT);
        assertThat(result.count(ExportingOutcome.TIMED_OUT)).isEqualTo(1);
        assertThat(result.count(ExportingOutcome.FAILED)).isZero();
    }

    @Test
    void aBrokerThatNeverAnswersTimesOutAtTheRequestTimeout() throws Exception
    {
        final ExportingControlService shortTimeout =
            new ExportingControlService(client, topology, Duration.ofMillis(200), Clock.systemUTC());
        client.respondWith(call -> call.target().brokerId() == 1 ? new CompletableFuture<>() : FakeBrokerClient.applied(call));

        final ExportingOperationResult result = shortTimeout.pause(false, Optional.empty()).get(10, TimeUnit.SECONDS);

        assertThat(result.result()).isEqualTo(ExportingOutcome.TIMED_OUT);
        assertThat(result.targets()).filteredOn(target -> target.brokerId() == 1).hasSize(6)
            .allSatisfy(target -> assertThat(target.outcome()).isEqualTo(ExportingOutcome.TIMED_OUT));
    }

    @Test
    void pairsOfAnUnreachableBrokerFailAtOnceWithoutWaitingForTheDeadline()
    {
        topology.unreachable(2);
        // Were anything sent to broker 2, it would hang until the 5 s deadline.
        client.respondWith(call -> call.target().brokerId() == 2 ? new CompletableFuture<>() : FakeBrokerClient.applied(call));

        final long start = System.nanoTime();
        final ExportingOperationResult result = service.pause(false, Optional.empty()).join();
        final Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

        assertThat(elapsed).isLessThan(TIMEOUT.dividedBy(5));
        assertThat(result.result()).isEqualTo(ExportingOutcome.FAILED);
        assertThat(result.targets()).filteredOn(target -> target.outcome() != ExportingOutcome.SUCCEEDED)
            .extracting(TargetResult::replica)
            .containsExactlyElementsOf(replicasOfBroker(2));
        assertThat(result.targets()).filteredOn(target -> target.brokerId() == 2)
            .allSatisfy(target -> assertThat(target.error()).isEqualTo("broker 2 unreachable"));
        assertThat(client.calls).noneMatch(call -> call.target().brokerId() == 2);
    }

    @Test
    void peerUnreachableIsAFailureNamingThePair()
    {
        client.respondWith(call -> call.target().brokerId() == 1 ?
            CompletableFuture.failedFuture(new PeerUnreachableException("connection refused", new ConnectException())) :
            FakeBrokerClient.applied(call));

        final ExportingOperationResult result = service.pause(false, Optional.empty()).join();

        assertThat(result.result()).isEqualTo(ExportingOutcome.FAILED);
        assertThat(outcomeOf(result, new PartitionReplica(1, 2)).error())
            .isEqualTo("partition 2 on broker 1: broker 1 unreachable (connection refused)");
    }

    @Test
    void requestsAreSentToAllPairsAtOnce()
    {
        final int pairs = topology.distribution().replicas().size();
        final List<CompletableFuture<AdminResult>> held = new ArrayList<>();
        final List<FakeBrokerClient.AdminCall> heldCalls = new ArrayList<>();
        // Answers nothing until every request has arrived: a sequential sender would wait for the deadline.
        client.respondWith(call ->
        {
            synchronized (held)
            {
                final CompletableFuture<AdminResult> answer = new CompletableFuture<>();
                held.add(answer);
                heldCalls.add(call);
                if (held.size() == pairs)
                {
                    for (int i = 0; i < pairs; i++)
                    {
                        held.get(i).complete(FakeBrokerClient.applied(heldCalls.get(i)).join());
                    }
                }
                return answer;
            }
        });

        final long start = System.nanoTime();
        final ExportingOperationResult result = service.pause(false, Optional.empty()).join();

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT.dividedBy(2));
        assertThat(result.result()).isEqualTo(ExportingOutcome.SUCCEEDED);
        assertThat(result.targets()).hasSize(pairs);
    }

    @Test
    void aTargetOutsideTheDistributionIsRejectedAndNothingIsSent()
    {
        // Partition 1 lives on brokers 0, 1, 2 with RF 3 of 3; a 4th broker and a 7th partition do not exist.
        assertThatThrownBy(() -> service.pause(false, Optional.of(List.of(new PartitionReplica(0, 1), new PartitionReplica(3, 1)))))
            .isInstanceOf(InvalidTargetsException.class)
            .hasMessageContaining("partition 1 on broker 3")
            .hasMessageContaining("broker 3 does not exist");
        assertThatThrownBy(() -> service.resume(Optional.of(List.of(new PartitionReplica(0, 7)))))
            .isInstanceOf(InvalidTargetsException.class)
            .hasMessageContaining("partition 7 does not exist (partitions are 1..6)");
        assertThatThrownBy(() -> service.resume(Optional.of(List.of())))
            .isInstanceOf(InvalidTargetsException.class)
            .hasMessageContaining("must not be empty");
        assertThat(client.calls).isEmpty();
    }

    @Test
    void aPairNotReplicatingThePartitionIsRejected()
    {
        final FakeClusterTopology rf2 = new FakeClusterTopology(
            io.sluice.protocol.cluster.PartitionDistribution.of("a:1,b:3,c:5", 6, 2));
        final ExportingControlService rf2Service = new ExportingControlService(client, rf2, TIMEOUT, Clock.systemUTC());

        // Partition 1 is on brokers 0 and 1 only.
        assertThatThrownBy(() -> rf2Service.pause(false, Optional.of(List.of(new PartitionReplica(2, 1)))))
            .isInstanceOf(InvalidTargetsException.class)
            .hasMessage("partition 1 on broker 2 is not in the cluster: partition 1 is replicated on brokers [0, 1]");
        assertThat(client.calls).isEmpty();
    }

    @Test
    void everyRequestNamesTheWholeOperationSoItsBrokersCommitItOnce()
    {
        service.pause(false, Optional.empty()).join();
        assertThat(client.calls).hasSize(18).allSatisfy(call ->
        {
            assertThat(call.operation().allPartitions()).as("every pair targeted").isTrue();
            assertThat(call.operation().partitions()).isEmpty();
        });

        client.calls.clear();
        service.resume(Optional.of(List.of(new PartitionReplica(2, 4), new PartitionReplica(0, 1),
            new PartitionReplica(1, 1)))).join();
        assertThat(client.calls).hasSize(3).allSatisfy(call ->
        {
            assertThat(call.operation().allPartitions()).isFalse();
            assertThat(call.operation().partitions()).containsExactly(1, 4);
        });
        assertThat(client.calls.stream().map(FakeBrokerClient.AdminCall::version).distinct()).hasSize(1);
    }

    @Test
    void theControlLeadersPairsAreSentFirstAndTheAnswerKeepsTheTargetsOrder()
    {
        topology.controlLeader(2);
        final ExportingOperationResult result = service.pause(false, Optional.empty()).join();

        final List<Integer> sentTo = client.calls.stream().map((call) -> call.target().brokerId()).toList();
        final int leaderPairs = (int)sentTo.stream().filter((broker) -> broker == 2).count();
        assertThat(leaderPairs).isPositive();
        assertThat(sentTo.subList(0, leaderPairs)).as("the control leader proposes on its first request").containsOnly(2);
        assertThat(result.targets().stream().map((t) -> new PartitionReplica(t.brokerId(), t.partitionId())).toList())
            .containsExactlyElementsOf(topology.distribution().replicas());
    }

    @Test
    void otherBrokersWaitForTheControlLeadersEntryOnlyWhenTheOperationReachesItToo()
    {
        final List<PartitionReplica> withoutBroker1 = List.of(new PartitionReplica(0, 1), new PartitionReplica(2, 4));

        topology.controlLeader(1);
        service.pause(false, Optional.of(withoutBroker1)).join();
        assertThat(client.calls).as("the control leader is not targeted").noneMatch(FakeBrokerClient.AdminCall::leaderTargeted);

        client.calls.clear();
        service.pause(false, Optional.empty()).join();
        assertThat(client.calls).hasSize(18).allMatch(FakeBrokerClient.AdminCall::leaderTargeted);

        client.calls.clear();
        topology.unreachable(1);
        service.pause(false, Optional.empty()).join();
        assertThat(client.calls).as("the control leader is known down").isNotEmpty()
            .noneMatch(FakeBrokerClient.AdminCall::leaderTargeted);

        client.calls.clear();
        topology.reset();
        service.pause(false, Optional.empty()).join();
        assertThat(client.calls).as("no control leader known").noneMatch(FakeBrokerClient.AdminCall::leaderTargeted);
    }

    @Test
    void aPairWhoseBrokerHasNotCaughtUpWithTheControlGroupShowsUnknown()
    {
        final PartitionReplica pair = new PartitionReplica(1, 1);
        topology.report(pair, new PartitionStatus(1, PartitionRole.FOLLOWER, 2, 0, ExportingState.EXPORTING, 0, 10, 5,
            Map.of())).controlNotCaughtUp(1);

        assertThat(service.status().targets()).filteredOn((t) -> t.brokerId() == 1 && t.partitionId() == 1)
            .singleElement().extracting(ExportingStatus.PairStatus::state).isEqualTo(ExportingStatus.UNKNOWN);
    }

    @Test
    void onlyTheGivenTargetsAreSentOnceEach()
    {
        final List<PartitionReplica> targets =
            List.of(new PartitionReplica(2, 4), new PartitionReplica(0, 1), new PartitionReplica(2, 4));

        final ExportingOperationResult result = service.resume(Optional.of(targets)).join();

        assertThat(result.targets()).extracting(TargetResult::replica)
            .containsExactly(new PartitionReplica(0, 1), new PartitionReplica(2, 4));
        assertThat(client.calls).extracting(FakeBrokerClient.AdminCall::target)
            .containsExactlyInAnyOrder(new PartitionReplica(0, 1), new PartitionReplica(2, 4));
    }

    @Test
    void versionsStrictlyIncreaseEvenWhenTheClockStandsStill()
    {
        final Clock frozen = Clock.fixed(Instant.parse("2026-11-29T20:00:00Z"), ZoneOffset.UTC);
        final ExportingControlService frozenService = new ExportingControlService(client, topology, TIMEOUT, frozen);

        final List<Long> versions = new ArrayList<>();
        for (int i = 0; i < 5; i++)
        {
            client.calls.clear();
            (i % 2 == 0 ? frozenService.pause(false, Optional.empty()) : frozenService.resume(Optional.empty())).join();
            versions.add(client.calls.peek().version());
        }

        assertThat(versions).isSorted().doesNotHaveDuplicates();
        assertThat(versions.get(0)).isEqualTo(Instant.parse("2026-11-29T20:00:00Z").toEpochMilli() * 1000);
    }

    @Test
    void aNewVersionIsAboveEveryVersionTheBrokersReport()
    {
        // Another gateway with a clock ahead (within the skew brokers accept) set this version: a later operation
        // must still win. A clock further ahead is refused by the brokers (ExportingVersionSequenceTest).
        final long reported = Instant.parse("2026-11-29T20:05:00Z").toEpochMilli() * 1000;
        topology.report(new PartitionReplica(1, 3), status(3, PartitionRole.LEADER, ExportingState.PAUSED, reported));

        service.resume(Optional.empty()).join();

        assertThat(client.calls).allSatisfy(call -> assertThat(call.version()).isGreaterThan(reported));
    }

    @Test
    void aPairWhereANewerRequestWonFails()
    {
        client.respondWith(call -> call.target().equals(new PartitionReplica(0, 5)) ?
            CompletableFuture.completedFuture(
                new AdminResult(call.target(), ExportingState.EXPORTING, call.version() + 1, 10, 20)) :
            FakeBrokerClient.applied(call));

        final ExportingOperationResult result = service.pause(false, Optional.empty()).join();

        assertThat(result.result()).isEqualTo(ExportingOutcome.FAILED);
        assertThat(outcomeOf(result, new PartitionReplica(0, 5)).error())
            .startsWith("partition 5 on broker 0: a newer request won: the replica holds EXPORTING at version");
    }

    @Test
    void aNewerRequestAskingForTheSameStateCountsAsSuccess()
    {
        client.respondWith(call -> CompletableFuture.completedFuture(
            new AdminResult(call.target(), ExportingState.PAUSED, call.version() + 7, 10, 20)));

        assertThat(service.pause(false, Optional.empty()).join().result()).isEqualTo(ExportingOutcome.SUCCEEDED);
    }

    @Test
    void aWarmUpSendsVersionZeroPausesToEachPairOfTheBrokerAndChangesNoStatus()
    {
        reportEverywhere(ExportingState.EXPORTING, 5);

        final int answered = service.warmUp(1, 3).join();

        assertThat(answered).isEqualTo(3 * 6);
        assertThat(client.calls).hasSize(3 * 6)
            .allSatisfy(call -> assertThat(call.target().brokerId()).isEqualTo(1))
            .allSatisfy(call -> assertThat(call.kind()).isEqualTo(AdminRequestKind.PAUSE_EXPORTING))
            .allSatisfy(call -> assertThat(call.version()).as("no replica takes version 0").isZero());
        // The fake answers PAUSED at version 0 as if it obeyed: still not the pairs' state.
        assertThat(service.status().state()).isEqualTo("EXPORTING");
    }

    @Test
    void aWarmUpOfABrokerThatDoesNotAnswerCountsNoAnswer()
    {
        client.respondWith(call -> CompletableFuture.failedFuture(new PeerUnreachableException("refused", new ConnectException())));

        assertThat(service.warmUp(0, 2).join()).isZero();
        assertThat(service.warmUp(7, 2).join()).as("not a broker of the distribution: nothing sent").isZero();
        assertThat(client.calls).hasSize(2 * 6);
    }

    @Test
    void statusReportsEveryPairAndTheCommonState()
    {
        for (final PartitionReplica replica : topology.distribution().replicas())
        {
            topology.report(replica, status(replica.partitionId(),
                replica.brokerId() == 0 ? PartitionRole.LEADER : PartitionRole.FOLLOWER, ExportingState.PAUSED, 5));
        }

        final ExportingStatus paused = service.status();

        assertThat(paused.state()).isEqualTo("PAUSED");
        assertThat(paused.targets()).hasSize(18);
        assertThat(paused.targets().get(0))
            .isEqualTo(new ExportingStatus.PairStatus(0, 1, "LEADER", "PAUSED", 118, 240));

        topology.unreachable(1);
        final ExportingStatus mixed = service.status();

        assertThat(mixed.state()).isEqualTo("MIXED");
        assertThat(mixed.targets()).filteredOn(pair -> pair.brokerId() == 1)
            .hasSize(6)
            .allSatisfy(pair -> assertThat(pair).isEqualTo(
                new ExportingStatus.PairStatus(1, pair.partitionId(), "UNKNOWN", "UNKNOWN", -1, -1)));
    }

    @Test
    void statusShowsTheAnsweredStateAtOnceAndAnOlderPollCannotTakeItBack()
    {
        reportEverywhere(ExportingState.EXPORTING, 5);

        assertThat(service.pause(false, Optional.empty()).join().result()).isEqualTo(ExportingOutcome.SUCCEEDED);
        assertThat(service.status().state()).as("before any poll").isEqualTo("PAUSED");

        reportEverywhere(ExportingState.EXPORTING, 5); // a poll that left before the pause was applied
        assertThat(service.status().state()).as("after an older poll").isEqualTo("PAUSED");

        assertThat(service.pause(true, Optional.empty()).join().result()).isEqualTo(ExportingOutcome.SUCCEEDED);
        assertThat(service.status().state()).isEqualTo("SOFT_PAUSED");
        assertThat(service.resume(Optional.empty()).join().result()).isEqualTo(ExportingOutcome.SUCCEEDED);
        assertThat(service.status().state()).isEqualTo("EXPORTING");

        reportEverywhere(ExportingState.PAUSED, Long.MAX_VALUE); // a newer change, e.g. through another gateway
        assertThat(service.status().state()).as("a poll of a newer version wins").isEqualTo("PAUSED");
    }

    @Test
    void statusAfterAnAnswerShowsPositionsNoOlderThanTheAnswers()
    {
        reportEverywhere(ExportingState.EXPORTING, 5); // polled: exported 118, last 240
        client.respondWith(call -> CompletableFuture.completedFuture(
            new AdminResult(call.target(), ExportingState.SOFT_PAUSED, call.version(), 150, 260)));

        assertThat(service.pause(true, Optional.empty()).join().result()).isEqualTo(ExportingOutcome.SUCCEEDED);

        assertThat(service.status().targets()).allSatisfy(pair ->
        {
            assertThat(pair.state()).isEqualTo("SOFT_PAUSED");
            assertThat(pair.exportedPosition()).as("the answer's, not the older poll's").isEqualTo(150);
            assertThat(pair.lastPosition()).isEqualTo(260);
        });
    }

    @Test
    void statusKeepsThePolledStateOfAFailedPairAndUnknownForAnUnreachableBroker()
    {
        reportEverywhere(ExportingState.EXPORTING, 5);
        final PartitionReplica refused = new PartitionReplica(2, 4);
        client.respondWith(call -> call.target().equals(refused) ?
            CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.UNAVAILABLE, 4, "no quorum")) :
            FakeBrokerClient.applied(call));

        assertThat(service.pause(false, Optional.empty()).join().result()).isEqualTo(ExportingOutcome.FAILED);
        topology.unreachable(1);
        final ExportingStatus status = service.status();

        assertThat(status.state()).isEqualTo("MIXED");
        assertThat(status.targets()).filteredOn(pair -> pair.brokerId() == 2 && pair.partitionId() == 4)
            .singleElement().satisfies(pair -> assertThat(pair.state()).isEqualTo("EXPORTING"));
        assertThat(status.targets()).filteredOn(pair -> pair.brokerId() == 1)
            .hasSize(6).allSatisfy(pair -> assertThat(pair.state()).isEqualTo("UNKNOWN"));
        assertThat(status.targets()).filteredOn(pair -> pair.brokerId() == 0)
            .hasSize(6).allSatisfy(pair -> assertThat(pair.state()).isEqualTo("PAUSED"));
    }

    private void reportEverywhere(final ExportingState state, final long version)
    {
        for (final PartitionReplica replica : topology.distribution().replicas())
        {
            topology.report(replica, status(replica.partitionId(),
                replica.brokerId() == 0 ? PartitionRole.LEADER : PartitionRole.FOLLOWER, state, version));
        }
    }

    @Test
    void statusIsUnknownWhenNoBrokerIsReachable()
    {
        topology.unreachable(0).unreachable(1).unreachable(2);

        assertThat(service.status().state()).isEqualTo("UNKNOWN");
    }

    private List<PartitionReplica> replicasOfBroker(final int brokerId)
    {
        return topology.distribution().replicas().stream().filter(replica -> replica.brokerId() == brokerId).toList();
    }

    private static TargetResult outcomeOf(final ExportingOperationResult result, final PartitionReplica replica)
    {
        return result.targets().stream().filter(target -> target.replica().equals(replica)).findFirst().orElseThrow();
    }

    private static PartitionStatus status(
        final int partitionId, final PartitionRole role, final ExportingState state, final long version)
    {
        return new PartitionStatus(partitionId, role, 1, 0, state, version, 240, 118, Map.of("file", 118L));
    }
}
