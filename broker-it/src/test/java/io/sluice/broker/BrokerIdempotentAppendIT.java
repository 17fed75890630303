package io.sluice.broker;

import io.sluice.testing.QuietPeriod;
import io.sluice.protocol.codecs.AppendRequestEncoder;
import io.sluice.protocol.codecs.AppendResponseDecoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.transport.MessageWriter;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three real brokers in this JVM: an append carrying an idempotency id is committed once, and a repeat answers the
 * positions it was first given, through snapshots, the replay of entries after a snapshot, and a restart of every
 * broker; the same id with another request digest is a CONFLICT that appends nothing; an id is forgotten after its
 * window on the partition's replicated clock.
 */
class BrokerIdempotentAppendIT
{
    private static final int PARTITION = 1;
    private static final long WINDOW_MS = 600_000;
    private static final int CLIENT = 1;

    @TempDir
    Path dataDir;

    @AutoClose
    private TestCluster cluster;

    @Test
    @Timeout(120)
    void aRepeatedIdAnswersItsFirstPositionsAndAnotherDigestIsAConflictThatAppendsNothing() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 1, 3, (c) -> c.withSnapshots(10, 64 * 1024));
        final long[] first = append(id(1), 7, 3, WINDOW_MS);
        assertThat(first).containsExactly(1, 3);
        assertThat(append(id(1), 7, 3, WINDOW_MS)).as("the repeat").containsExactly(1, 3);
        assertThat(lastPosition()).isEqualTo(3);

        assertThat(appendError(id(1), 8, 1, WINDOW_MS)).isEqualTo(ErrorCode.CONFLICT);
        assertThat(appendError(id(1), 8, 3, WINDOW_MS)).isEqualTo(ErrorCode.CONFLICT);
        assertThat(lastPosition()).as("nothing appended by a conflict").isEqualTo(3);

        assertThat(append(id(2), 9, 0, WINDOW_MS)).as("an empty claim").containsExactly(4, 0);
        assertThat(appendError(id(2), 10, 0, WINDOW_MS)).isEqualTo(ErrorCode.CONFLICT);
        assertThat(append(id(3), 9, 2, WINDOW_MS)).containsExactly(4, 2);
        assertThat(lastPosition()).isEqualTo(5);
    }

    @Test
    @Timeout(180)
    void idsAreRememberedWithTheirPositionsAcrossSnapshotsReplayAndARestartOfEveryBroker() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 1, 3, (c) -> c.withSnapshots(10, 64 * 1024));
        final List<long[]> answers = new ArrayList<>();
        for (int i = 0; i < 45; i++)
        {
            answers.add(append(id(100 + i), 100 + i, 1 + i % 3, WINDOW_MS));
            cluster.append(PARTITION, List.of("plain-" + i), List.of("{\"i\":" + i + "}")); // ids between plain entries
        }
        final long last = lastPosition();

        cluster.stopAll();
        for (int b = 0; b < 3; b++)
        {
            cluster.startBroker(b);
        }
        cluster.awaitLeader(PARTITION);

        for (int i = 0; i < 45; i++)
        {
            assertThat(append(id(100 + i), 100 + i, 1 + i % 3, WINDOW_MS)).as("repeat of id %d after the restart", i)
                .containsExactly(answers.get(i));
        }
        assertThat(lastPosition()).as("nothing appended again").isEqualTo(last);
        assertThat(appendError(id(120), 1, 1, WINDOW_MS)).isEqualTo(ErrorCode.CONFLICT);
    }

    @Test
    @Timeout(120)
    void anIdIsForgottenAfterItsWindowOnTheReplicatedClock() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 1, 3);
        assertThat(append(id(7), 1, 1, 500)).containsExactly(1, 1);
        assertThat(append(id(7), 1, 1, 500)).containsExactly(1, 1);
        QuietPeriod.of(java.time.Duration.ofMillis(800), "the 500 ms window runs out");
        assertThat(append(id(7), 1, 1, 500)).as("after the window: appended anew").containsExactly(2, 1);
        assertThat(appendError(id(7), 2, 1, 500)).as("and remembered anew").isEqualTo(ErrorCode.CONFLICT);
        assertThat(lastPosition()).isEqualTo(2);
    }

    /**
     * Batches sent at once queue behind the entries in flight and go out merged: the leader applies each merged entry
     * as the rope it proposed over the batches' own bytes, gathering nothing, and every replica holds every record.
     */
    @Test
    @Timeout(120)
    void concurrentBatchesAreMergedAndTheLeaderWritesThemFromTheirOwnBytes() throws Exception
    {
        // Automatic balance off: the merged entries are counted on the leader the batches were sent to, which balance
        // would otherwise move to its preferred broker seconds after the start, under the test.
        cluster = TestCluster.start(dataDir, 3, 1, 3, (c) -> c.withAutoRebalance(false));
        final int leader = cluster.awaitLeader(PARTITION);
        final int batches = 64;
        final List<java.util.concurrent.CompletableFuture<DirectBuffer>> sent = new ArrayList<>();
        for (int i = 0; i < batches; i++)
        {
            sent.add(cluster.client.send(cluster.address(leader), request(id(1_000 + i), i, 1 + i % 3, WINDOW_MS),
                TestCluster.REQUEST_TIMEOUT));
        }
        final java.util.TreeMap<Long, Long> answered = new java.util.TreeMap<>();
        long records = 0;
        for (int i = 0; i < batches; i++)
        {
            DirectBuffer response = sent.get(i).get(30, TimeUnit.SECONDS);
            long[] positions = positions(response);
            if (positions == null) // refused while the leadership moved: the id makes sending it again safe
            {
                positions = append(id(1_000 + i), i, 1 + i % 3, WINDOW_MS);
            }
            assertThat(positions[1]).isEqualTo(1 + i % 3);
            answered.put(positions[0], positions[1]);
            records += positions[1];
        }
        long next = 1;
        for (final java.util.Map.Entry<Long, Long> batch : answered.entrySet())
        {
            assertThat(batch.getKey()).as("batches' positions dense and disjoint").isEqualTo(next);
            next += batch.getValue();
        }
        final long last = next - 1;
        assertThat(last).isEqualTo(records);
        assertThat(lastPosition()).isEqualTo(last);

        final io.sluice.broker.partition.PartitionState state = cluster.brokers[leader].partition(PARTITION).state();
        assertThat(state.entriesAppliedInPieces()).as("merged entries applied as the ropes proposed").isPositive();
        assertThat(state.gatheredBytes()).isZero();
        for (final Broker broker : cluster.brokers)
        {
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> broker.partition(PARTITION).state().lastPosition() == last);
        }
    }

    // ----------------------------------------------------------------------------------------------- helpers

    /** {firstPosition, count} of an append's answer, or null for an error. */
    private static long[] positions(final DirectBuffer response)
    {
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(response, 0);
        if (header.templateId() != AppendResponseDecoder.TEMPLATE_ID)
        {
            return null;
        }
        final AppendResponseDecoder decoder = new AppendResponseDecoder()
            .wrap(response, header.encodedLength(), header.blockLength(), header.version());
        return new long[] {decoder.firstPosition(), decoder.count()};
    }

    private static long[] id(final long n)
    {
        return new long[] {n * 31, ~n};
    }

    private long lastPosition()
    {
        final int leader = cluster.awaitLeader(PARTITION);
        return cluster.brokers[leader].partition(PARTITION).state().lastPosition();
    }

    private long[] append(final long[] id, final long digest, final int records, final long windowMs)
    {
        final Object outcome = send(id, digest, records, windowMs);
        if (outcome instanceof long[] positions)
        {
            return positions;
        }
        throw new AssertionError("append answered " + outcome);
    }

    private ErrorCode appendError(final long[] id, final long digest, final int records, final long windowMs)
    {
        final Object outcome = send(id, digest, records, windowMs);
        if (outcome instanceof ErrorCode code)
        {
            return code;
        }
        throw new AssertionError("append answered positions " + java.util.Arrays.toString((long[])outcome));
    }

    /** {firstPosition, count}, or the error code of a refusal other than "not leader / unavailable" (which is retried). */
    private Object send(final long[] id, final long digest, final int records, final long windowMs)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String last = "";
        while (System.nanoTime() < deadline)
        {
            final int leader = cluster.awaitLeader(PARTITION);
            final DirectBuffer response;
            try
            {
                response = cluster.send(leader, request(id, digest, records, windowMs));
            }
            catch (final AssertionError e)
            {
                last = e.getMessage();
                TestCluster.backoff();
                continue;
            }
            final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(response, 0);
            if (header.templateId() == AppendResponseDecoder.TEMPLATE_ID)
            {
                final AppendResponseDecoder decoder = new AppendResponseDecoder()
                    .wrap(response, header.encodedLength(), header.blockLength(), header.version());
                return new long[] {decoder.firstPosition(), decoder.count()};
            }
            final ErrorResponseDecoder error = TestCluster.error(response);
            last = error.code() + " " + error.message();
            if (error.code() != ErrorCode.NOT_LEADER && error.code() != ErrorCode.UNAVAILABLE)
            {
                return error.code();
            }
            TestCluster.backoff();
        }
        throw new AssertionError("append not answered within 60 s: " + last);
    }

    private static MessageWriter request(final long[] id, final long digest, final int records, final long windowMs)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        final AppendRequestEncoder encoder = new AppendRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .partitionId(PARTITION)
            .idempotencyWindowMs(windowMs)
            .idempotencyScope((short)CLIENT)
            .idHigh(id[0])
            .idLow(id[1])
            .bodyDigest(digest);
        final AppendRequestEncoder.RecordsEncoder group = encoder.recordsCount(records);
        for (int i = 0; i < records; i++)
        {
            final byte[] payload = ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8);
            group.next().timestamp(1_764_420_000_000L + i).key("k" + i).putPayload(payload, 0, payload.length);
        }
        return TestCluster.bytes(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }
}
