package io.sluice.qa.backfill;

import io.sluice.qa.Exporting;
import io.sluice.qa.Records;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static io.sluice.qa.Exporting.STATE_TIMEOUT;
import static io.sluice.qa.backfill.BackfillRecords.BACKFILL_TIMEOUT;
import static io.sluice.qa.backfill.BackfillRecords.EXPORTER;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 15: two gateways side by side give the same answers, because what they must agree on lives in the cluster
 * control group. A cluster of separate JVMs (3 brokers, 6 partitions, RF 3) with TWO gateway processes: both are sent
 * a reset of one exporter at the same instant, round after round, and exactly one answers 202 while the other answers
 * 409 naming the winner's backfill (and registered nothing); and a backfill with nothing to export, started on one,
 * is listed and found by id on the other.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class TwoGatewaysBackfillIT
{
    private static final String TOKEN = "qa-two-gateways-token";
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(4);
    private static final int ROUNDS = 4;
    private static final String RESET = "/actuator/exporters/" + EXPORTER + "/resetToLatestAndBackfill?backfillTaskCount=6";

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    private SluiceCluster cluster;
    private final ExecutorService callers = Executors.newFixedThreadPool(2);

    @BeforeAll
    void startCluster()
    {
        cluster = RUN.cluster("cluster", builder -> builder.brokers(3).partitions(6).replicationFactor(3).gateways(2)
            .token(TOKEN).requestTimeout(REQUEST_TIMEOUT));
        cluster.start();
        cluster.awaitReady(); // both gateways
        cluster.awaitPreferredLeaders(); // a reset asks each partition's leader
    }

    @BeforeEach
    void everyBrokerUpAndExporting()
    {
        Exporting.everyBrokerUpAndExporting(cluster);
    }

    @AfterAll
    void stopCallers()
    {
        callers.shutdownNow();
    }

    @Test
    @Order(1)
    void twoGatewaysRacingToResetOneExporterAnswerExactlyOne202AndOne409EveryRound() throws Exception
    {
        for (int round = 1; round <= ROUNDS; round++)
        {
            // Paused, the winner's tasks stay unfinished, so the loser is refused however late it comes: by the claim
            // while the winner is being started, by the winner's running tasks after.
            final HttpAnswer pause = cluster.client().pause().http();
            assertThat(pause.status()).as("pause: %s", pause).isEqualTo(200);
            Exporting.awaitClusterState(cluster, "PAUSED");
            final List<WrittenRecord> lagging = Records.write(cluster, "race-" + round, 120);
            for (int g = 0; g < 2; g++)
            {
                awaitViewShowing(g, Records.highestPositions(lagging));
            }
            final Set<String> before = backfillIds(0);
            assertThat(backfillIds(1)).as("both gateways list the same backfills before round %d", round).isEqualTo(before);

            final HttpAnswer[] answers = raceResets();

            cluster.log("round " + round + ": gateway 0 " + answers[0] + " | gateway 1 " + answers[1]);
            assertThat(List.of(answers[0].status(), answers[1].status())).as("round %d: %s | %s", round, answers[0],
                answers[1]).containsExactlyInAnyOrder(202, 409);
            final int winner = answers[0].status() == 202 ? 0 : 1;
            final int loser = 1 - winner;
            final String backfillId = answers[winner].json().path("backfillId").asString("");
            assertThat(backfillId).as("%s", answers[winner]).isNotBlank();
            final JsonNode refusal = answers[loser].json();
            assertThat(refusal.path("error").asString("")).as("%s", answers[loser]).isNotBlank();
            assertThat(refusal.path("message").asString("")).as("the 409 names the backfill holding the claim")
                .contains(backfillId);

            // The same answers from both gateways: the winner's backfill, nothing of the loser's.
            final JsonNode fromWinner = awaitBackfill(winner, backfillId);
            final JsonNode fromLoser = awaitBackfill(loser, backfillId);
            assertThat(fromLoser.path("ranges")).as("ranges of %s on both gateways", backfillId)
                .isEqualTo(fromWinner.path("ranges")).isEqualTo(answers[winner].json().path("ranges"));
            assertThat(fromLoser.path("tasks").size()).isEqualTo(fromWinner.path("tasks").size()).isPositive();
            final Set<String> after = new TreeSet<>(before);
            after.add(backfillId);
            assertThat(backfillIds(0)).as("gateway 0 after round %d", round).isEqualTo(after);
            assertThat(backfillIds(1)).as("gateway 1 after round %d", round).isEqualTo(after);

            if (round % 2 == 1)
            {
                // Cancelled through the gateway that lost: it sees and acts on the same backfill.
                final HttpAnswer cancel = cluster.client(loser).management("DELETE", "/actuator/backfills/" + backfillId, null);
                assertThat(cancel.status()).as("cancel: %s", cancel).isEqualTo(200);
                assertThat(cancel.json().path("state").asString("")).as("%s", cancel).isEqualTo("CANCELLED");
                Exporting.resumeAndAwaitExporting(cluster);
            }
            else
            {
                Exporting.resumeAndAwaitExporting(cluster);
                awaitState(loser, backfillId, "SUCCEEDED");
            }
            Records.awaitExported(cluster, Records.write(cluster, "after-" + round, 30));
        }
    }

    @Test
    @Order(2)
    void anEmptyBackfillStartedOnOneGatewayIsListedAndFoundOnTheOther()
    {
        final List<WrittenRecord> written = Records.write(cluster, "caught-up", 30);
        Records.awaitExported(cluster, written);
        for (int g = 0; g < 2; g++)
        {
            awaitEveryLeaderCaughtUp(g);
        }

        final HttpAnswer started = cluster.client(0).management("POST", RESET, null);

        assertThat(started.status()).as("reset with nothing to export: %s", started).isEqualTo(202);
        final JsonNode empty = started.json();
        final String backfillId = empty.path("backfillId").asString("");
        assertThat(empty.path("ranges").isEmpty()).as("%s", started).isTrue();
        assertThat(empty.path("state").asString("")).as("%s", started).isEqualTo("SUCCEEDED");
        final HttpAnswer found = cluster.client(1).management("GET", "/actuator/backfills/" + backfillId, null);
        assertThat(found.status()).as("the other gateway: %s", found).isEqualTo(200);
        assertThat(found.json()).as("the same backfill from the other gateway").isEqualTo(empty);
        assertThat(cluster.client(0).management("GET", "/actuator/backfills/" + backfillId, null).json()).isEqualTo(empty);
        for (int g = 0; g < 2; g++)
        {
            final JsonNode listed = listOf(g).stream().filter(b -> backfillId.equals(b.path("backfillId").asString("")))
                .findFirst().orElseThrow(() -> new AssertionError(backfillId + " not listed by gateway"));
            assertThat(listed).as("listed by both gateways alike").isEqualTo(empty);
        }
    }

    // ------------------------------------------------------------------------------------------ helpers

    /** Both gateways' resets, sent at the same instant from two threads. */
    private HttpAnswer[] raceResets() throws Exception
    {
        final CountDownLatch ready = new CountDownLatch(2);
        final CountDownLatch go = new CountDownLatch(1);
        final List<CompletableFuture<HttpAnswer>> calls = new ArrayList<>();
        for (int g = 0; g < 2; g++)
        {
            final int gateway = g;
            calls.add(CompletableFuture.supplyAsync(() ->
            {
                ready.countDown();
                try
                {
                    go.await();
                }
                catch (final InterruptedException e)
                {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
                return cluster.client(gateway).management("POST", RESET, null);
            }, callers));
        }
        assertThat(ready.await(10, TimeUnit.SECONDS)).as("both callers ready").isTrue();
        go.countDown();
        return new HttpAnswer[] {calls.get(0).get(60, TimeUnit.SECONDS), calls.get(1).get(60, TimeUnit.SECONDS)};
    }

    /** Waits until gateway {@code g}'s polled view shows each partition's leader with at least these last positions. */
    private void awaitViewShowing(final int g, final Map<Integer, Long> lastAtLeast)
    {
        Await.until("gateway " + g + "'s view showing the last positions " + lastAtLeast, STATE_TIMEOUT, () ->
        {
            final ExportingStatus status = cluster.client(g).exporting();
            return lastAtLeast.entrySet().stream().allMatch(entry -> status.leaderOf(entry.getKey())
                .flatMap(leader -> status.pair(leader, entry.getKey()))
                .map(pair -> pair.lastPosition() >= entry.getValue()).orElse(false));
        });
    }

    /** Waits until gateway {@code g}'s view shows every partition's leader acknowledged up to its last position. */
    private void awaitEveryLeaderCaughtUp(final int g)
    {
        Await.until("gateway " + g + "'s view showing every leader exported to its last position", STATE_TIMEOUT, () ->
        {
            final ExportingStatus status = cluster.client(g).exporting();
            for (int partitionId = 1; partitionId <= cluster.partitionCount(); partitionId++)
            {
                final int id = partitionId;
                final boolean caughtUp = status.leaderOf(id).flatMap(leader -> status.pair(leader, id))
                    .map(pair -> pair.lastPosition() >= 0 && pair.exportedPosition() >= pair.lastPosition())
                    .orElse(false);
                if (!caughtUp)
                {
                    return false;
                }
            }
            return true;
        });
    }

    private List<JsonNode> listOf(final int g)
    {
        final HttpAnswer list = cluster.client(g).management("GET", "/actuator/backfills", null);
        if (list.status() != 200 || !list.json().path("unavailablePartitions").isEmpty() ||
            list.json().has("controlGroupUnavailable"))
        {
            throw new IllegalStateException("GET /actuator/backfills on gateway " + g + ": " + list);
        }
        final List<JsonNode> backfills = new ArrayList<>();
        list.json().path("backfills").forEach(backfills::add);
        return backfills;
    }

    private Set<String> backfillIds(final int g)
    {
        return Await.value("gateway " + g + " listing every backfill", STATE_TIMEOUT, () ->
        {
            final Set<String> ids = new TreeSet<>();
            listOf(g).forEach(backfill -> ids.add(backfill.path("backfillId").asString("")));
            return Optional.of(ids);
        });
    }

    private JsonNode awaitBackfill(final int g, final String backfillId)
    {
        return Await.value("backfill " + backfillId + " on gateway " + g + " with every partition", STATE_TIMEOUT, () ->
        {
            final HttpAnswer answer = cluster.client(g).management("GET", "/actuator/backfills/" + backfillId, null);
            if (answer.status() != 200)
            {
                throw new IllegalStateException("GET backfill " + backfillId + " on gateway " + g + ": " + answer);
            }
            final JsonNode view = answer.json();
            return view.path("unavailablePartitions").isEmpty() ? Optional.of(view) : Optional.empty();
        });
    }

    private void awaitState(final int g, final String backfillId, final String state)
    {
        Await.value("backfill " + backfillId + " " + state + " on gateway " + g, BACKFILL_TIMEOUT, () ->
        {
            final JsonNode view = awaitBackfill(g, backfillId);
            return state.equals(view.path("state").asString("")) ? Optional.of(view) : Optional.empty();
        });
    }
}
