package io.sluice.qa;

import io.sluice.gateway.records.PartitionSelector;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportedRecord;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.GatewayException;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.PairState;
import io.sluice.qa.cluster.SluiceCluster;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 14: {@code POST /v1/records} with an {@code Idempotency-Key}, against three broker JVMs and a gateway JVM.
 * A request repeated around a SIGKILL of a partition leader, a broker restart and a gateway restart appends its
 * records once and answers the same positions every time; another body under the key is a 422 that appends
 * nothing; after the window the key is forgotten (checked by {@link IdempotencyWindowIT}, after the other classes).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Execution(ExecutionMode.SAME_THREAD)
class IdempotentAppendsIT
{
    /** Long enough for the retries around a kill and two restarts on a loaded machine; waited out in the last test. */
    private static final Duration WINDOW = SharedCluster.IDEMPOTENCY_WINDOW;
    private static final int RECORDS = 12;

    @RegisterExtension
    static final SharedCluster SHARED = new SharedCluster();

    private static SluiceCluster cluster;
    private static long firstAnsweredAtNanos;
    private static String firstAnswer;
    private static String firstKey;

    @BeforeAll
    static void startCluster()
    {
        cluster = SHARED.cluster();
        cluster.awaitLeaders();
    }

    @Test
    @Order(1)
    void aRequestRetriedFiveTimesAroundALeaderKillIsAppendedAndExportedOnceWithTheSamePositions() throws Exception
    {
        final String key = "retry-around-kill";
        final String nonce = "n" + System.nanoTime();
        final String body = batch(nonce, "kill");
        firstKey = key;
        final int victim = cluster.awaitLeaders().leaderOf(partitionOfFirstRecord()).orElseThrow();
        final Map<Integer, Long> before = lastPositions();

        // Attempt 1 races the SIGKILL of the leader of the first record's partition: its answer may be lost.
        final CompletableFuture<HttpAnswer> first = CompletableFuture.supplyAsync(() ->
        {
            try
            {
                return cluster.client().postRecords(body, key);
            }
            catch (final GatewayException ex)
            {
                return new HttpAnswer(599, ex.getMessage(), Duration.ZERO);
            }
        });
        Await.quietPeriod("attempt 1 on its way before the leader is killed", Duration.ofMillis(30));
        cluster.killBroker(victim);
        final HttpAnswer attempt1 = first.get(2, TimeUnit.MINUTES);
        cluster.log("attempt 1 around the kill of broker " + victim + ": " + attempt1.status());

        final List<String> answers = new ArrayList<>();
        if (attempt1.status() == 200)
        {
            answers.add(positionsOf(attempt1));
        }
        else
        {
            assertThat(attempt1.status()).as("attempt 1: %s", attempt1).isIn(503, 599);
        }
        answers.add(retryUntilOk(body, key, "attempt 2, during the failover"));
        answers.add(retryUntilOk(body, key, "attempt 3, on the new leader"));
        cluster.startBroker(victim);
        cluster.awaitBrokerAvailable(victim);
        answers.add(retryUntilOk(body, key, "attempt 4, after broker " + victim + " restarted"));
        cluster.killGateway();
        cluster.startGateway();
        cluster.awaitReady();
        answers.add(retryUntilOk(body, key, "attempt 5, through a restarted gateway"));

        assertThat(answers).as("every answer names the same positions").containsOnly(answers.get(0));
        assertThat(Duration.ofNanos(System.nanoTime() - firstAnsweredAtNanos))
            .as("the retries ran within the window, so they prove de-duplication").isLessThan(WINDOW);

        final Map<Integer, Long> appended = appendedSince(before);
        assertThat(appended.values().stream().mapToLong(Long::longValue).sum())
            .as("records appended to the logs, per partition %s", appended).isEqualTo(RECORDS);
        assertExportedOnceAt(nonce, answers.get(0));
        firstAnswer = answers.get(0);
        System.out.printf("[sluice-qa] %d answers, all %s; appended per partition %s; broker %d killed%n",
            answers.size(), answers.get(0), appended, victim);
    }

    @Test
    @Order(2)
    void theSameKeyWithAnotherBodyIsRefusedWith422AndAppendsNothing()
    {
        final String key = "reused-with-another-body";
        final HttpAnswer original = cluster.client().postRecords(batch("first" + System.nanoTime(), "a"), key);
        assertThat(original.status()).as("%s", original).isEqualTo(200);
        final Map<Integer, Long> before = lastPositions();

        // Other record keys, so other partitions than the original's: none of them may take anything.
        final HttpAnswer other = cluster.client().postRecords(batch("second" + System.nanoTime(), "b"), key);
        assertThat(other.status()).as("%s", other).isEqualTo(422);
        assertThat(other.json().path("error").asString()).isEqualTo("idempotency_key_reused");
        assertThat(other.json().path("message").asString()).contains(key).contains("different request body");

        final HttpAnswer single = cluster.client().postRecords("{\"key\": \"z\", \"payload\": 1}", key);
        assertThat(single.status()).as("%s", single).isEqualTo(422);
        Await.quietPeriod("a refused request gets time to show an append it must not have made", Duration.ofSeconds(1));
        assertThat(lastPositions()).isEqualTo(before);
    }

    @Test
    @Order(3)
    void aRecordAwayFromTheKeysHomePartitionIsAppendedOnceAndRepeatsAnswerTheSame()
    {
        final PartitionSelector selector = new PartitionSelector(cluster.partitionCount());
        final String recordKey = "away-record";
        String key = "away-0";
        for (int i = 1; selector.partitionFor(key) == selector.partitionFor(recordKey); i++)
        {
            key = "away-" + i;
        }
        final String body = "{\"key\": \"" + recordKey + "\", \"payload\": {\"away\": true}}";
        final Map<Integer, Long> before = lastPositions();

        final HttpAnswer first = cluster.client().postRecords(body, key);
        assertThat(first.status()).as("%s", first).isEqualTo(200);
        final HttpAnswer again = cluster.client().postRecords(body, key);
        assertThat(again.status()).as("%s", again).isEqualTo(200);

        assertThat(again.json().path("position").asLong()).isEqualTo(first.json().path("position").asLong());
        assertThat(first.json().path("partitionId").asInt()).isEqualTo(selector.partitionFor(recordKey));
        assertThat(appendedSince(before).values().stream().mapToLong(Long::longValue).sum()).isEqualTo(1);
    }

    @Test
    @Order(4)
    void anInvalidIdempotencyKeyIsRefusedWith400BeforeAnythingIsAppended()
    {
        final Map<Integer, Long> before = lastPositions();
        final HttpAnswer tooLong = cluster.client().postRecords("{\"key\": \"k\", \"payload\": 1}", "x".repeat(129));
        assertThat(tooLong.status()).as("%s", tooLong).isEqualTo(400);
        assertThat(tooLong.json().path("error").asString()).isEqualTo("invalid_idempotency_key");
        assertThat(tooLong.json().path("message").asString()).contains("128");
        assertThat(lastPositions()).isEqualTo(before);
    }

    /**
     * The key of the first test after its window: forgotten, the request appends again; remembered anew, its repeat
     * is de-duplicated again. {@link IdempotencyWindowIT} runs it as the last class on the shared cluster, so the
     * window runs out while the classes between run instead of being waited out here. Without the first test's use
     * (that class run alone) it uses a key of its own first and waits the whole window.
     */
    static void assertForgottenAfterTheWindow(final SluiceCluster shared)
    {
        cluster = shared;
        if (firstAnswer == null)
        {
            firstKey = "window-" + System.nanoTime();
            firstAnsweredAtNanos = 0;
            firstAnswer = retryUntilOk(batch("n" + System.nanoTime(), "kill"), firstKey, "the key's first use");
        }
        final String key = firstKey;
        final String body = batchOfTest1;
        final Duration left = WINDOW.minus(Duration.ofNanos(System.nanoTime() - firstAnsweredAtNanos)).plusSeconds(2);
        if (!left.isNegative())
        {
            Await.quietPeriod("the idempotency window of the first answer runs out", left);
        }
        final Map<Integer, Long> before = lastPositions();
        final String again = retryUntilOk(body, key, "the key after its window");
        assertThat(again).isNotEqualTo(firstAnswer);
        assertThat(appendedSince(before).values().stream().mapToLong(Long::longValue).sum()).isEqualTo(RECORDS);
        // Forgotten once, remembered anew: the next repeat is de-duplicated again.
        assertThat(retryUntilOk(body, key, "the key repeated after its second use")).isEqualTo(again);
    }

    // ----------------------------------------------------------------------------------------------- helpers

    private static String batchOfTest1;

    /** {@value #RECORDS} records whose keys spread over the partitions, each payload carrying the nonce. */
    private static String batch(final String nonce, final String keyPrefix)
    {
        final StringBuilder body = new StringBuilder("[");
        for (int i = 0; i < RECORDS; i++)
        {
            body.append(i == 0 ? "" : ",").append("{\"key\":\"").append(keyPrefix).append('-').append(i)
                .append("\",\"payload\":{\"nonce\":\"").append(nonce).append("\",\"i\":").append(i).append("}}");
        }
        final String json = body.append(']').toString();
        if ("kill".equals(keyPrefix))
        {
            batchOfTest1 = json;
        }
        return json;
    }

    private static int partitionOfFirstRecord()
    {
        // Ask the cluster rather than re-implement the hash: one throw-away record with the same record key.
        final HttpAnswer probe = cluster.client().postRecords("{\"key\": \"kill-0\", \"payload\": \"probe\"}");
        assertThat(probe.status()).as("%s", probe).isEqualTo(200);
        return probe.json().path("partitionId").asInt();
    }

    private static String retryUntilOk(final String body, final String key, final String what)
    {
        final String answer = Await.value(what, SluiceCluster.scaled(Duration.ofSeconds(120)), () ->
        {
            final HttpAnswer attempt;
            try
            {
                attempt = cluster.client().postRecords(body, key);
            }
            catch (final GatewayException ex)
            {
                return Optional.empty();
            }
            if (attempt.status() == 503)
            {
                return Optional.empty();
            }
            assertThat(attempt.status()).as("%s: %s", what, attempt).isEqualTo(200);
            return Optional.of(positionsOf(attempt));
        });
        if (firstAnsweredAtNanos == 0)
        {
            firstAnsweredAtNanos = System.nanoTime();
        }
        cluster.log(what + ": " + answer);
        return answer;
    }

    private static String positionsOf(final HttpAnswer answer)
    {
        if (firstAnsweredAtNanos == 0)
        {
            firstAnsweredAtNanos = System.nanoTime();
        }
        final StringBuilder positions = new StringBuilder();
        for (final JsonNode item : answer.json())
        {
            positions.append(item.path("partitionId").asInt()).append(':').append(item.path("position").asLong()).append(' ');
        }
        return positions.toString().trim();
    }

    /**
     * Last position per partition once every replica reports the same one and two reads a few poll intervals apart
     * agree: the gateway's view is polled, so a single read may not show a commit yet.
     */
    private static Map<Integer, Long> lastPositions()
    {
        return Await.value("every replica to report the same, settled last position", SluiceCluster.scaled(Duration.ofSeconds(60)), () ->
        {
            final Optional<Map<Integer, Long>> first = agreedLastPositions();
            Await.quietPeriod("the last positions settled: two reads 1.5 s apart must agree", Duration.ofMillis(1_500));
            final Optional<Map<Integer, Long>> second = agreedLastPositions();
            return first.isPresent() && first.equals(second) ? first : Optional.empty();
        });
    }

    private static Optional<Map<Integer, Long>> agreedLastPositions()
    {
        final ExportingStatus status = cluster.client().exporting();
        final Map<Integer, Long> max = new TreeMap<>();
        final Map<Integer, Long> min = new TreeMap<>();
        for (final PairState pair : status.targets())
        {
            if ("UNKNOWN".equals(pair.state()))
            {
                return Optional.empty();
            }
            max.merge(pair.pair().partitionId(), pair.lastPosition(), Math::max);
            min.merge(pair.pair().partitionId(), pair.lastPosition(), Math::min);
        }
        return max.equals(min) ? Optional.of(max) : Optional.empty();
    }

    private static Map<Integer, Long> appendedSince(final Map<Integer, Long> before)
    {
        final Map<Integer, Long> after = lastPositions();
        final Map<Integer, Long> appended = new TreeMap<>();
        after.forEach((partition, last) -> appended.put(partition, last - before.getOrDefault(partition, 0L)));
        return appended;
    }

    /** Each record of the nonce is exported at exactly one position (re-exports of that position are allowed), the answered one. */
    private static void assertExportedOnceAt(final String nonce, final String answer)
    {
        final Map<String, List<Long>> positionsByRecord = Await.value("all " + RECORDS + " records exported",
            Records.EXPORT_TIMEOUT, () ->
            {
                final Map<String, List<Long>> found = new HashMap<>();
                for (int partition = 1; partition <= cluster.partitionCount(); partition++)
                {
                    for (final ExportedRecord record : cluster.exportedRecords(partition))
                    {
                        if (record.payloadJson().contains(nonce))
                        {
                            final List<Long> at = found.computeIfAbsent(record.partitionId() + ":" + record.key(), k -> new ArrayList<>());
                            if (!at.contains(record.position()))
                            {
                                at.add(record.position());
                            }
                        }
                    }
                }
                return found.size() == RECORDS ? Optional.of(found) : Optional.empty();
            });
        final List<String> exported = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++)
        {
            final int index = i;
            final Map.Entry<String, List<Long>> entry = positionsByRecord.entrySet().stream()
                .filter(e -> e.getKey().endsWith(":kill-" + index)).findFirst().orElseThrow();
            assertThat(entry.getValue()).as("distinct positions of record %s", entry.getKey()).hasSize(1);
            exported.add(entry.getKey().substring(0, entry.getKey().indexOf(':')) + ":" + entry.getValue().get(0));
        }
        assertThat(String.join(" ", exported)).as("exported positions").isEqualTo(answer);
    }
}
