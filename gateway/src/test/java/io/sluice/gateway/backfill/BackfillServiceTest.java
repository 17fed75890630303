package io.sluice.gateway.backfill;

import io.sluice.broker.control.BackfillClaimChange;
import io.sluice.broker.control.BackfillClaimTable;
import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.gateway.management.ManagementException;
import io.sluice.protocol.backfill.BackfillRanges;
import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimPhase;
import io.sluice.protocol.codecs.BackfillState;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.transport.RequestTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.http.HttpStatus;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static io.sluice.gateway.backfill.FakeBackfillCluster.Kind.CANCEL;
import static io.sluice.gateway.backfill.FakeBackfillCluster.Kind.CLAIM;
import static io.sluice.gateway.backfill.FakeBackfillCluster.Kind.CLAIMS;
import static io.sluice.gateway.backfill.FakeBackfillCluster.Kind.START;
import static io.sluice.gateway.backfill.FakeBackfillCluster.Kind.STATUS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BackfillServiceTest
{
    private final FakeBackfillCluster cluster = new FakeBackfillCluster();
    /**
     * The gateway's request timeout here. Several cases wait it out on purpose (a partition that shows no leader, brokers
     * naming each other), and the fake answers at once: half a second bounds them as surely as seconds would.
     */
    private static final Duration REQUEST_TIMEOUT = Duration.ofMillis(500);
    private final BackfillService service = new BackfillService(cluster, cluster, 64, REQUEST_TIMEOUT,
        Clock.fixed(Instant.ofEpochMilli(15_000), ZoneOffset.UTC));

    @Test
    void badTaskCountsAre400AndNothingIsSent()
    {
        for (final String bad : List.of("0", "-2", "abc", "65", "1.5", ""))
        {
            assertRefused(service.start("file", bad), HttpStatus.BAD_REQUEST, "backfillTaskCount");
        }
        assertRefused(service.start("file", "65"), HttpStatus.BAD_REQUEST, "from 1 to 64 (sluice.backfill.max-tasks), was 65");
        assertRefused(service.start("file", "abc"), HttpStatus.BAD_REQUEST, "was 'abc'");
        assertThat(cluster.calls).isEmpty();
    }

    @Test
    void anUnknownExporterIs404NamingTheKnownOnes()
    {
        assertRefused(service.start("kafka", null), HttpStatus.NOT_FOUND, "unknown exporter 'kafka' (known: file)");
        assertThat(cluster.calls).isEmpty();
    }

    @Test
    void aRunningBackfillOfTheExporterIs409AndNoBackfillRequestIsSent()
    {
        cluster.hold(FakeBackfillCluster.task(4, "old", 3, BackfillState.RUNNING, 1, 10, 5));

        assertRefused(service.start("file", "6"), HttpStatus.CONFLICT,
            "exporter 'file' has a backfill still running: old on partitions [4]");
        assertThat(cluster.sent(START)).isZero();
        assertThat(cluster.sent(STATUS)).isEqualTo(6);
    }

    @Test
    void aSecondStartOfTheSameExporterWhileTheFirstIsInFlightIs409()
    {
        final CompletableFuture<List<BackfillTaskStatus>> held = new CompletableFuture<>();
        cluster.responder = call -> call.kind() == START ? held : cluster.answerAsLeader(call);
        final CompletableFuture<BackfillView> first = service.start("file", null);
        final String firstId = cluster.claims.claim("file").backfillId();

        assertRefused(service.start("file", null), HttpStatus.CONFLICT, "exporter 'file' cannot be reset now: backfill " +
            firstId + " holds the claim of exporter 'file' and is being started");
        assertThat(cluster.sent(START)).isEqualTo(6);

        held.complete(List.of());
        first.join();
        assertThat(cluster.claims.claim("file").phase()).as("started before the answer").isEqualTo(BackfillClaimPhase.STARTED);
        cluster.responder = cluster::answerAsLeader;
        assertThat(service.start("file", null).join().tasks()).hasSize(6);
    }

    @Test
    void twoGatewaysRacingToResetOneExporterGetExactlyOne202AndOne409NamingTheWinner()
    {
        // Two services over one cluster are two gateways: both read the claim and check the partitions before either
        // takes the claim, so only the control group's compare-and-set tells them apart.
        final BackfillService other = new BackfillService(cluster, cluster, 64, REQUEST_TIMEOUT,
            Clock.fixed(Instant.ofEpochMilli(15_000), ZoneOffset.UTC));
        final CompletableFuture<Void> bothChecked = new CompletableFuture<>();
        final java.util.concurrent.atomic.AtomicInteger claimsAsked = new java.util.concurrent.atomic.AtomicInteger();
        cluster.controlResponder = call ->
        {
            if (call.kind() == CLAIM && call.claim().action() == BackfillClaimAction.CLAIM)
            {
                if (claimsAsked.incrementAndGet() == 2)
                {
                    bothChecked.complete(null);
                }
                return bothChecked.thenCompose(ignored -> cluster.answerAsControlGroup(call));
            }
            return cluster.answerAsControlGroup(call);
        };

        final CompletableFuture<BackfillView> one = service.start("file", null);
        final CompletableFuture<BackfillView> two = other.start("file", null);
        CompletableFuture.allOf(one, two).exceptionally(e -> null).join();

        final List<CompletableFuture<BackfillView>> won = java.util.stream.Stream.of(one, two)
            .filter(f -> !f.isCompletedExceptionally()).toList();
        assertThat(won).hasSize(1);
        final BackfillView winner = won.get(0).join();
        assertThat(winner.tasks()).hasSize(6);
        assertRefused(one == won.get(0) ? two : one, HttpStatus.CONFLICT,
            "backfill " + winner.backfillId() + " took the claim of exporter 'file' while this reset was checked");
        assertThat(cluster.calls).filteredOn(c -> c.kind() == START).extracting(FakeBackfillCluster.Call::backfillId)
            .as("the loser registered nothing").containsOnly(winner.backfillId());
        assertThat(cluster.calls).filteredOn(c -> c.kind() == START).extracting(FakeBackfillCluster.Call::claimIndex)
            .as("every registration names the winner's claim").containsOnly(cluster.claims.claim("file").claimIndex());
    }

    @Test
    void aClaimBeingStartedIsA409ForADryRunAndAResetAlikeAndNothingIsSent()
    {
        cluster.claims.apply(BackfillClaimChange.claim("file", "bf-elsewhere", null, false, 14_000, 1), 7);

        assertRefused(service.plan("file", null), HttpStatus.CONFLICT,
            "backfill bf-elsewhere holds its claim and is being started (claimed 1000 ms ago)");
        assertRefused(service.start("file", null), HttpStatus.CONFLICT,
            "backfill bf-elsewhere holds the claim of exporter 'file' and is being started");
        assertThat(cluster.sent(START)).isZero();
        assertThat(cluster.claims.claim("file").backfillId()).isEqualTo("bf-elsewhere");
        assertThat(cluster.exported.get(1)).as("nothing moved").isEqualTo(100);
    }

    @Test
    void aClaimLeftByAGatewayThatDiedBeforeRegisteringIsTakenOverOnlyAfterTheBound()
    {
        cluster.claims.apply(BackfillClaimChange.claim("file", "bf-dead", null, false, 15_000, 1), 7);
        cluster.nowMs.set(15_000 + BackfillClaimTable.STARTING_TAKEOVER_MS - 1);
        assertRefused(service.start("file", null), HttpStatus.CONFLICT, "bf-dead");
        assertThat(service.plan("file", null)).isCompletedExceptionally();

        cluster.nowMs.set(15_000 + BackfillClaimTable.STARTING_TAKEOVER_MS);
        assertThat(service.plan("file", null).join().partitions()).hasSize(6);
        final BackfillView view = service.start("file", null).join();

        assertThat(view.tasks()).hasSize(6);
        assertThat(cluster.claims.claim("file").backfillId()).isEqualTo(view.backfillId());
    }

    @Test
    void aStartThatRegisteredNothingReleasesItsClaimAndTheNextStartTakesItFresh()
    {
        cluster.responder = call -> call.kind() == START ?
            CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.UNAVAILABLE, -1, "busy")) :
            cluster.answerAsLeader(call);

        assertThatThrownBy(() -> service.start("file", null).join()).cause()
            .isInstanceOfSatisfying(BackfillStartException.class, e -> assertThat(e.registered().tasks()).isEmpty());
        assertThat(cluster.claims.claim("file")).as("released").isNull();
        assertThat(cluster.calls).filteredOn(c -> c.kind() == CLAIM).extracting(c -> c.claim().action())
            .containsExactly(BackfillClaimAction.CLAIM, BackfillClaimAction.RELEASE);

        cluster.responder = cluster::answerAsLeader;
        assertThat(service.start("file", null).join().tasks()).hasSize(6);
    }

    @Test
    void aClaimWhoseAnswerIsLostIs503ReleasedAndRegistersNothing()
    {
        cluster.controlResponder = call -> call.kind() == CLAIM && call.claim().action() == BackfillClaimAction.CLAIM ?
            cluster.answerAsControlGroup(call).thenCompose(taken ->
                CompletableFuture.failedFuture(new RequestTimeoutException("deadline"))) :
            cluster.answerAsControlGroup(call);

        assertRefused(service.start("file", null), HttpStatus.SERVICE_UNAVAILABLE,
            "the control group did not answer the CLAIM");
        assertThat(cluster.sent(START)).isZero();
        assertThat(cluster.claims.claim("file")).as("the claim it may have taken is released").isNull();
    }

    @Test
    void aControlGroupThatCannotBeReadIs503ForResetsAndNamedInListsAndNothingIsSent()
    {
        cluster.hold(FakeBackfillCluster.task(2, "with-tasks", 1, BackfillState.SUCCEEDED, 1, 10, 10));
        cluster.controlResponder = call -> CompletableFuture.failedFuture(new RequestTimeoutException("deadline"));

        assertRefused(service.start("file", null), HttpStatus.SERVICE_UNAVAILABLE,
            "the cluster control group could not be read (asked broker 0): no answer within " + REQUEST_TIMEOUT.toMillis() + " ms; nothing was changed");
        assertRefused(service.plan("file", null), HttpStatus.SERVICE_UNAVAILABLE, "control group could not be read");
        final BackfillList list = service.list().join();
        assertThat(list.backfills()).extracting(BackfillView::backfillId).containsExactly("with-tasks");
        assertThat(list.controlGroupUnavailable()).contains("the cluster control group could not be read")
            .contains("backfills with nothing to export are not listed");
        assertThat(service.get("with-tasks").join().state()).as("the tasks alone answer").isEqualTo("SUCCEEDED");
        assertRefused(service.get("nope"), HttpStatus.SERVICE_UNAVAILABLE, "the cluster control group could not be read");
        assertThat(cluster.sent(START)).isZero();
        assertThat(cluster.sent(CLAIM)).isZero();
    }

    @Test
    void theControlGroupsLeaderIsAskedAndANotLeaderAnswerIsFollowedOnce()
    {
        cluster.controlLeader = 1;
        cluster.controlResponder = call -> call.brokerId() == 1 && call.kind() == CLAIMS ?
            CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.NOT_LEADER, 2, "not the control leader")) :
            cluster.answerAsControlGroup(call);

        assertThat(service.start("file", null).join().tasks()).hasSize(6);

        assertThat(cluster.calls).filteredOn(c -> c.kind() == CLAIMS).extracting(FakeBackfillCluster.Call::brokerId)
            .containsExactly(1, 2);
        assertThat(cluster.calls).filteredOn(c -> c.kind() == CLAIM).extracting(FakeBackfillCluster.Call::brokerId)
            .containsOnly(1);
    }

    @Test
    void anEmptyBackfillStartedOnOneGatewayIsListedAndFoundOnAnother()
    {
        cluster.exported.putAll(cluster.last);
        final BackfillService other = new BackfillService(cluster, cluster, 64, REQUEST_TIMEOUT,
            Clock.fixed(Instant.ofEpochMilli(99_000), ZoneOffset.UTC));

        final BackfillView empty = service.start("file", null).join();

        assertThat(empty.createdAtMs()).as("the control group's time, not a gateway's").isEqualTo(15_000);
        assertThat(other.get(empty.backfillId()).join()).isEqualTo(empty);
        assertThat(other.list().join().backfills()).containsExactly(empty);
        assertThat(other.list().join().controlGroupUnavailable()).isNull();
        assertThat(cluster.claims.emptyBackfills()).extracting(e -> e.backfillId()).containsExactly(empty.backfillId());
        assertThat(other.cancel(empty.backfillId()).join()).as("nothing to cancel").isEqualTo(empty);
    }

    @Test
    void aFinishedBackfillOfTheExporterDoesNotBlockANewOne()
    {
        cluster.hold(FakeBackfillCluster.task(4, "old", 3, BackfillState.SUCCEEDED, 1, 10, 10));

        assertThat(service.start("file", null).join().tasks()).hasSize(6);
    }

    @Test
    void aPartitionWithoutReachableLeaderIs503AndNothingIsSent()
    {
        cluster.leaders.remove(5);

        assertRefused(service.start("file", null), HttpStatus.SERVICE_UNAVAILABLE,
            "partition 5 has no reachable leader; nothing was changed");
        assertThat(cluster.sent(START)).isZero();

        cluster.reset();
        cluster.unreachable.put(2, true);
        assertRefused(service.start("file", null), HttpStatus.SERVICE_UNAVAILABLE, "partition 3 has no reachable leader");
        assertThat(cluster.sent(START)).isZero();
    }

    @Test
    void aLeaderThatCannotBeAskedIs503AndNothingIsSent()
    {
        cluster.responder = call -> call.partitionId() == 2 ?
            CompletableFuture.failedFuture(new RequestTimeoutException("deadline")) : cluster.answerAsLeader(call);

        assertRefused(service.start("file", null), HttpStatus.SERVICE_UNAVAILABLE,
            "partition 2 on broker 1: no answer within " + REQUEST_TIMEOUT.toMillis() + " ms");
        assertThat(cluster.sent(START)).isZero();
    }

    @Test
    void validationRunsInOrderCountThenExporterThenConflictThenLeaders()
    {
        cluster.leaders.remove(5);
        cluster.hold(FakeBackfillCluster.task(4, "old", 3, BackfillState.PENDING, 1, 10, 5));

        assertRefused(service.start("kafka", "0"), HttpStatus.BAD_REQUEST, "backfillTaskCount");
        assertRefused(service.start("kafka", "3"), HttpStatus.NOT_FOUND, "kafka");
        assertRefused(service.start("file", "6"), HttpStatus.CONFLICT, "old");
        cluster.held.clear();
        assertRefused(service.start("file", "6"), HttpStatus.SERVICE_UNAVAILABLE, "partition 5");
        assertThat(cluster.sent(START)).isZero();
    }

    @Test
    void fewerTasksThanLaggingPartitionsShareTasksAcrossPartitions()
    {
        final BackfillPlan plan = service.plan("file", "4").join();

        assertThat(cluster.sent(START)).isZero();
        assertThat(plan.backfillTaskCount()).isEqualTo(4);
        assertThat(plan.partitions()).extracting(BackfillPlan.Partition::taskCount).containsOnly(1);
        assertThat(plan.partitions()).extracting(BackfillPlan.Partition::firstTaskId).containsExactly(1, 2, 3, 4, 1, 2);
        assertThat(plan.tasks()).extracting(BackfillPlan.Task::taskId, BackfillPlan.Task::partitionId)
            .containsExactly(tuple(1, 1), tuple(1, 5), tuple(2, 2), tuple(2, 6), tuple(3, 3), tuple(4, 4));
        assertThat(plan.ranges()).hasSize(6);

        final BackfillView view = service.start("file", "4").join();
        assertThat(cluster.sent(START)).isEqualTo(6);
        assertThat(view.tasks()).extracting(BackfillView.Task::taskId).containsOnly(1, 2, 3, 4);
    }

    @Test
    void aDryRunPlansWithoutSendingAnyBackfillRequest()
    {
        final BackfillPlan plan = service.plan("file", "8").join();

        assertThat(cluster.sent(START)).isZero();
        assertThat(plan.dryRun()).isTrue();
        assertThat(plan.backfillTaskCount()).isEqualTo(8);
        assertThat(plan.partitions()).extracting(BackfillPlan.Partition::partitionId,
                BackfillPlan.Partition::oldPosition, BackfillPlan.Partition::newPosition, BackfillPlan.Partition::taskCount)
            .startsWith(tuple(1, 100L, 150L, 2), tuple(2, 200L, 250L, 2), tuple(3, 300L, 350L, 1));
        assertThat(plan.ranges()).first().isEqualTo(new BackfillView.Range(1, 101, 150));
        assertThat(plan.tasks()).extracting(BackfillPlan.Task::taskId).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
        assertThat(plan.tasks().get(0)).isEqualTo(new BackfillPlan.Task(1, 1, 101, 125));
        assertThat(plan.tasks().get(1)).isEqualTo(new BackfillPlan.Task(2, 1, 126, 150));
        assertThat(cluster.exported.get(1)).as("nothing moved").isEqualTo(100);
    }

    @Test
    void aRangeThePartitionNoLongerHoldsIsReportedUnavailableAndTheHeldPartIsPlannedInTheDryRunAndTheStart()
    {
        for (int p = 1; p <= 6; p++)
        {
            cluster.exported.put(p, cluster.last.get(p)); // up to date
        }
        cluster.exported.put(3, 0L);
        cluster.last.put(3, 1_000L);
        cluster.firstHeld.put(3, 601L);

        final BackfillPlan plan = service.plan("file", "2").join();

        assertThat(plan.unavailable()).containsExactly(new BackfillView.Range(3, 1, 600));
        assertThat(plan.ranges()).containsExactly(new BackfillView.Range(3, 601, 1_000));
        assertThat(plan.tasks()).extracting(BackfillPlan.Task::fromPosition, BackfillPlan.Task::toPosition)
            .containsExactly(tuple(601L, 800L), tuple(801L, 1_000L));
        assertThat(cluster.sent(START)).isZero();

        final BackfillView view = service.start("file", "2").join();
        assertThat(view.unavailable()).containsExactly(new BackfillView.Range(3, 1, 600));
    }

    @Test
    void aSingleLaggingPartitionGetsEveryTaskSplitByPosition()
    {
        for (int p = 1; p <= 6; p++)
        {
            cluster.exported.put(p, cluster.last.get(p)); // up to date
        }
        cluster.exported.put(3, 0L);
        cluster.last.put(3, 1_000L);

        final BackfillView view = service.start("file", "4").join();

        assertThat(cluster.calls).filteredOn(c -> c.kind() == START).singleElement()
            .satisfies(call ->
            {
                assertThat(call.partitionId()).isEqualTo(3);
                assertThat(call.brokerId()).isEqualTo(2);
                assertThat(call.taskCount()).isEqualTo(4);
                assertThat(call.firstTaskId()).isEqualTo(1);
                assertThat(call.exporterId()).isEqualTo("file");
            });
        assertThat(view.ranges()).containsExactly(new BackfillView.Range(3, 1, 1_000));
        assertThat(view.tasks()).extracting(BackfillView.Task::fromPosition, BackfillView.Task::toPosition)
            .containsExactly(tuple(1L, 250L), tuple(251L, 500L), tuple(501L, 750L), tuple(751L, 1_000L));
        assertThat(view.state()).isEqualTo("PENDING");
    }

    @Test
    void tasksAreWeightedByRangeLengthWithAtLeastOnePerLaggingPartition()
    {
        assertThat(BackfillTaskSplit.allocate(new long[] {1_000, 10, 90}, 10)).containsExactly(8, 1, 1);
        assertThat(BackfillTaskSplit.allocate(new long[] {100, 100}, 5)).containsExactly(3, 2);
        assertThat(BackfillTaskSplit.allocate(new long[] {2, 1}, 10)).as("never more tasks than positions")
            .containsExactly(2, 1);
        assertThatThrownBy(() -> BackfillTaskSplit.allocate(new long[] {5, 5, 5}, 2)).hasMessageContaining("3 partitions");
        assertThat(BackfillRanges.split(118, 240, 4)).containsExactly(
            new BackfillRanges.Range(119, 149), new BackfillRanges.Range(150, 180),
            new BackfillRanges.Range(181, 210), new BackfillRanges.Range(211, 240));
    }

    @Test
    void withoutATaskCountEachLaggingPartitionGetsOneTaskAndUpToDateOnesNone()
    {
        cluster.exported.put(2, cluster.last.get(2));

        final BackfillView view = service.start("file", null).join();

        assertThat(cluster.calls).filteredOn(c -> c.kind() == START)
            .extracting(FakeBackfillCluster.Call::partitionId, FakeBackfillCluster.Call::taskCount,
                FakeBackfillCluster.Call::firstTaskId)
            .containsExactlyInAnyOrder(tuple(1, 1, 1), tuple(3, 1, 2), tuple(4, 1, 3), tuple(5, 1, 4), tuple(6, 1, 5));
        assertThat(view.ranges()).extracting(BackfillView.Range::partitionId).containsExactly(1, 3, 4, 5, 6);
        assertThat(view.backfillId()).isNotBlank();
        assertThat(cluster.calls).filteredOn(c -> c.kind() == START).extracting(FakeBackfillCluster.Call::backfillId)
            .containsOnly(view.backfillId());
    }

    @Test
    void anExporterAtTheLatestEverywhereStartsAnEmptySucceededBackfill()
    {
        cluster.exported.putAll(cluster.last);

        final BackfillView view = service.start("file", null).join();

        assertThat(cluster.sent(START)).isZero();
        assertThat(view.state()).isEqualTo("SUCCEEDED");
        assertThat(view.progress()).isEqualTo(1.0);
        assertThat(service.get(view.backfillId()).join()).isEqualTo(view);
    }

    @Test
    void aPartitionThatFailsToRegisterIsReportedWithWhatWasRegistered()
    {
        cluster.responder = call -> call.kind() == START && call.partitionId() == 2 ?
            CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.NOT_LEADER, -1, "not leader")) :
            cluster.answerAsLeader(call);

        assertThatThrownBy(() -> service.start("file", null).join()).cause()
            .isInstanceOfSatisfying(BackfillStartException.class, e ->
            {
                assertThat(e.status()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
                assertThat(e.failures()).containsExactly("partition 2 on broker 1: not leader");
                assertThat(e.registered().ranges()).extracting(BackfillView.Range::partitionId)
                    .containsExactly(1, 3, 4, 5, 6);
                assertThat(e.registered().unavailablePartitions()).containsExactly(2);
                assertThat(e.getMessage()).contains("partitions [2] were not reset");
            });
    }

    @Test
    void aLeaderThatMovedAfterThePlanIsFollowedOnceToTheLeaderItNames()
    {
        // Partition 2's leader moved from broker 1 to broker 2 after the gateway planned: broker 1 registers
        // nothing and names broker 2, which registers the partition's range.
        cluster.responder = call -> call.kind() == START && call.partitionId() == 2 && call.brokerId() == 1 ?
            CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.NOT_LEADER, 2, "not leader")) :
            cluster.answerAsLeader(call);

        final BackfillView view = service.start("file", null).join();

        assertThat(view.ranges()).extracting(BackfillView.Range::partitionId).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(view.unavailablePartitions()).isEmpty();
        assertThat(cluster.calls).filteredOn(c -> c.kind() == START && c.partitionId() == 2)
            .extracting(FakeBackfillCluster.Call::brokerId).containsExactly(1, 2);
    }

    @Test
    void brokersNamingEachOtherAreAskedUntilTheRequestTimeoutThenThePartitionIsReported()
    {
        // Two brokers naming each other (a leadership moving back and forth): asked again with a backoff until the
        // request timeout is spent, then the partition is reported, not asked for ever.
        cluster.responder = call -> call.kind() == START && call.partitionId() == 2 ?
            CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.NOT_LEADER, call.brokerId() == 1 ? 2 : 1,
                "not leader")) :
            cluster.answerAsLeader(call);

        assertThatThrownBy(() -> service.start("file", null).join()).cause()
            .isInstanceOfSatisfying(BackfillStartException.class, e ->
            {
                assertThat(e.failures()).singleElement().asString().matches(
                    "partition 2 on broker [12]: not leader \\(leader is [12]\\)");
                assertThat(e.registered().unavailablePartitions()).containsExactly(2);
            });
        assertThat(cluster.calls).filteredOn(c -> c.kind() == START && c.partitionId() == 2)
            .hasSizeGreaterThan(2).hasSizeLessThan(40);
    }

    @Test
    void aNotLeaderAnswerNamingNoLeaderIsAskedAgainAfterABackoffAndTheStartGoesThrough()
    {
        // The leader refused while its leadership was moving and knew no successor yet: asked again shortly after.
        final java.util.concurrent.atomic.AtomicBoolean refused = new java.util.concurrent.atomic.AtomicBoolean();
        cluster.responder = call -> call.kind() == START && call.partitionId() == 2 && refused.compareAndSet(false, true) ?
            CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.NOT_LEADER, -1, "not leader")) :
            cluster.answerAsLeader(call);

        final BackfillView view = service.start("file", null).join();

        assertThat(view.unavailablePartitions()).isEmpty();
        assertThat(cluster.calls).filteredOn(c -> c.kind() == START && c.partitionId() == 2).hasSize(2);
    }

    @Test
    void aLeaderThatMovedBeforeTheValidationIsAskedWhereItMoved()
    {
        // Partition 3's leader moved from broker 2 to broker 0 between the topology poll and the validation's
        // query: broker 2 names broker 0, which is asked instead, and the start goes through.
        cluster.responder = call -> call.brokerId() == 2 && call.partitionId() == 3 ?
            CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.NOT_LEADER, 0, "not leader")) :
            cluster.answerAsLeader(call);

        final BackfillView view = service.start("file", null).join();

        assertThat(view.unavailablePartitions()).isEmpty();
        assertThat(view.ranges()).extracting(BackfillView.Range::partitionId).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(cluster.calls).filteredOn(c -> c.kind() == STATUS && c.partitionId() == 3)
            .extracting(FakeBackfillCluster.Call::brokerId).containsExactly(2, 0);
    }

    @Test
    void aRunningBackfillOnALeaderThatMovedIsStill409()
    {
        cluster.hold(FakeBackfillCluster.task(3, "running", 1, BackfillState.RUNNING, 1, 100, 50));
        cluster.responder = call -> call.brokerId() == 2 && call.partitionId() == 3 ?
            CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.NOT_LEADER, 0, "not leader")) :
            cluster.answerAsLeader(call);

        assertRefused(service.start("file", null), HttpStatus.CONFLICT, "has a backfill still running: running");
        assertThat(cluster.sent(START)).isZero();
    }

    @Test
    void aCancelFollowsALeaderThatMoved()
    {
        final BackfillView started = service.start("file", "6").join();
        cluster.responder = call -> call.kind() == CANCEL && call.brokerId() == 2 && call.partitionId() == 3 ?
            CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.NOT_LEADER, 0, "not leader")) :
            cluster.answerAsLeader(call);

        final BackfillView cancelled = service.cancel(started.backfillId()).join();

        assertThat(cancelled.unavailablePartitions()).isEmpty();
        assertThat(cancelled.state()).isEqualTo("CANCELLED");
        assertThat(cluster.calls).filteredOn(c -> c.kind() == CANCEL && c.partitionId() == 3)
            .extracting(FakeBackfillCluster.Call::brokerId).containsExactly(2, 0);
    }

    @Test
    void aBackfillViewSumsUpTheLeadersTasks()
    {
        cluster.hold(FakeBackfillCluster.task(1, "b", 1, BackfillState.SUCCEEDED, 1, 100, 100));
        cluster.hold(FakeBackfillCluster.task(1, "b", 2, BackfillState.RUNNING, 101, 200, 150));
        cluster.hold(FakeBackfillCluster.task(3, "b", 3, BackfillState.PENDING, 11, 110, 10));
        cluster.hold(FakeBackfillCluster.task(3, "other", 1, BackfillState.RUNNING, 11, 110, 10));

        final BackfillView view = service.get("b").join();

        assertThat(view.state()).isEqualTo("RUNNING");
        assertThat(view.totalPositions()).isEqualTo(300);
        assertThat(view.exportedPositions()).isEqualTo(150);
        assertThat(view.progress()).isEqualTo(0.5);
        assertThat(view.ratePerSecond()).isEqualTo(150 * 1000.0 / (15_000 - 1_000));
        assertThat(view.ranges()).containsExactly(new BackfillView.Range(1, 1, 200), new BackfillView.Range(3, 11, 110));
        assertThat(view.tasks()).extracting(BackfillView.Task::taskId, BackfillView.Task::exportedUpTo,
                BackfillView.Task::progress)
            .containsExactly(tuple(1, 100L, 1.0), tuple(2, 150L, 0.5), tuple(3, 10L, 0.0));
        assertThat(view.unavailablePartitions()).isEmpty();
        assertThat(service.list().join().backfills()).extracting(BackfillView::backfillId).containsExactlyInAnyOrder("b", "other");
    }

    @Test
    void theStateOfABackfillFollowsItsTasks()
    {
        assertThat(stateOf(BackfillState.SUCCEEDED, BackfillState.SUCCEEDED)).isEqualTo("SUCCEEDED");
        assertThat(stateOf(BackfillState.SUCCEEDED, BackfillState.FAILED)).isEqualTo("FAILED");
        assertThat(stateOf(BackfillState.CANCELLED, BackfillState.SUCCEEDED)).isEqualTo("CANCELLED");
        assertThat(stateOf(BackfillState.FAILED, BackfillState.RUNNING)).isEqualTo("RUNNING");
        assertThat(stateOf(BackfillState.PENDING, BackfillState.SUCCEEDED)).isEqualTo("PENDING");
        assertThat(stateOf()).isEqualTo("SUCCEEDED");
    }

    @Test
    void unknownBackfillsAre404AndUnaskablePartitions503()
    {
        assertRefused(service.get("nope"), HttpStatus.NOT_FOUND, "unknown backfill 'nope'");

        cluster.leaders.remove(2);
        assertRefused(service.get("nope"), HttpStatus.SERVICE_UNAVAILABLE, "partitions [2] could not be asked");
    }

    @Test
    void cancelReachesEveryLeaderAndAnswersTheCancelledBackfill()
    {
        final BackfillView started = service.start("file", "6").join();

        final BackfillView cancelled = service.cancel(started.backfillId()).join();

        assertThat(cluster.sent(CANCEL)).isEqualTo(6);
        assertThat(cancelled.state()).isEqualTo("CANCELLED");
        assertThat(cancelled.tasks()).extracting(BackfillView.Task::state).containsOnly("CANCELLED");
        assertRefused(service.cancel("nope"), HttpStatus.NOT_FOUND, "unknown backfill 'nope'");
    }

    private static String stateOf(final BackfillState... states)
    {
        final List<BackfillTaskStatus> tasks = new java.util.ArrayList<>();
        for (int i = 0; i < states.length; i++)
        {
            tasks.add(FakeBackfillCluster.task(1, "b", i, states[i], 1, 10, 5));
        }
        return BackfillViews.stateOf(tasks);
    }

    private static void assertRefused(final CompletableFuture<?> future, final HttpStatus status, final String message)
    {
        assertThatThrownBy(future::join).isInstanceOf(CompletionException.class).cause()
            .isInstanceOfSatisfying(ManagementException.class, e ->
            {
                assertThat(e.status()).isEqualTo(status);
                assertThat(e.getMessage()).contains(message);
            });
    }
}
