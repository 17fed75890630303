package io.sluice.broker.partition;

import io.sluice.broker.log.codecs.AppendEntryDecoder;
import io.sluice.broker.log.codecs.AppendEntryEncoder;
import io.sluice.broker.log.codecs.AppendOutcome;
import io.sluice.broker.log.codecs.IdempotencyScope;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AppendBatcherTest
{
    private final List<byte[]> entries = new ArrayList<>();
    private final List<CompletableFuture<AppendOutcomes>> replies = new ArrayList<>();
    private final AppendBatcher batcher = new AppendBatcher((entry) ->
    {
        entries.add(entry);
        final CompletableFuture<AppendOutcomes> reply = new CompletableFuture<>();
        replies.add(reply);
        return reply;
    });

    @Test
    @Timeout(10)
    void batchesQueuedWhileEntriesAreInFlightShareOneEntryAndSplitItsPositions()
    {
        final List<CompletableFuture<AppendPositions>> first = new ArrayList<>();
        for (int i = 0; i < AppendBatcher.MAX_IN_FLIGHT; i++)
        {
            first.add(batcher.append(batch("a" + i), 1));
        }
        assertThat(entries).hasSize(AppendBatcher.MAX_IN_FLIGHT);

        final CompletableFuture<AppendPositions> x = batcher.append(batch("x1", "x2"), 2);
        final CompletableFuture<AppendPositions> y = batcher.append(batch("y1"), 1);
        assertThat(entries).as("queued while the window is full").hasSize(AppendBatcher.MAX_IN_FLIGHT);

        replies.get(0).complete(AppendOutcomes.appended(1, 1));
        assertThat(first.get(0).join()).isEqualTo(new AppendPositions(1, 1));
        assertThat(entries).hasSize(AppendBatcher.MAX_IN_FLIGHT + 1);
        assertThat(keys(entries.get(AppendBatcher.MAX_IN_FLIGHT))).containsExactly("x1", "x2", "y1");

        replies.get(AppendBatcher.MAX_IN_FLIGHT).complete(AppendOutcomes.appended(10, 3));
        assertThat(x.join()).isEqualTo(new AppendPositions(10, 2));
        assertThat(y.join()).isEqualTo(new AppendPositions(12, 1));
    }

    @Test
    @Timeout(10)
    void aFailedEntryFailsEveryBatchInIt()
    {
        final CompletableFuture<AppendPositions> a = batcher.append(batch("a"), 1);
        replies.get(0).completeExceptionally(new IllegalStateException("not leader"));
        assertThat(a).isCompletedExceptionally();
    }

    @Test
    @Timeout(10)
    void anIdempotentEntryAnswersEachBatchItsOwnPositionsAndFailsOnlyTheConflictingOne()
    {
        final CompletableFuture<AppendPositions> plain = batcher.append(batch("p"), 1);
        final CompletableFuture<AppendPositions> duplicate = batcher.append(batch("d1", "d2"), 2, id(1));
        final CompletableFuture<AppendPositions> conflict = batcher.append(batch("c"), 1, id(2));
        // The first went alone; the window was not full, so each went in its own entry: answer the idempotent ones.
        assertThat(entries).hasSize(3);
        final AppendReplies.BatchesReply reply = new AppendReplies.BatchesReply();
        reply.start(1);
        reply.add(40, 2, AppendOutcome.DUPLICATE);
        replies.get(1).complete(AppendReplies.decode(reply.bytes()));
        reply.start(1);
        reply.add(-1, 0, AppendOutcome.CONFLICT);
        replies.get(2).complete(AppendReplies.decode(reply.bytes()));
        replies.get(0).complete(AppendReplies.decode(AppendReplies.appendResult(7, 1)));

        assertThat(plain.join()).isEqualTo(new AppendPositions(7, 1));
        assertThat(duplicate.join()).as("the positions first given").isEqualTo(new AppendPositions(40, 2));
        assertThatThrownBy(conflict::join).hasCauseInstanceOf(PartitionException.class).hasMessageContaining("another request body");
    }

    @Test
    @Timeout(10)
    void anIdempotentEntryAnsweredForAnotherNumberOfBatchesFailsEachBatch()
    {
        final CompletableFuture<AppendPositions> a = batcher.append(batch("a"), 1, id(1));
        final AppendReplies.BatchesReply reply = new AppendReplies.BatchesReply();
        reply.start(2);
        reply.add(1, 1, AppendOutcome.APPENDED);
        reply.add(2, 1, AppendOutcome.APPENDED);
        replies.get(0).complete(AppendReplies.decode(reply.bytes()));
        assertThatThrownBy(a::join).hasMessageContaining("answered 2 batches of 1");
    }

    @Test
    void aReplyCutShortOrOfAnotherKindDecodesToNothing()
    {
        final AppendReplies.BatchesReply reply = new AppendReplies.BatchesReply();
        reply.start(2);
        reply.add(1, 1, AppendOutcome.APPENDED);
        reply.add(2, 3, AppendOutcome.DUPLICATE);
        final byte[] whole = reply.bytes();
        assertThat(AppendReplies.decode(whole).toString()).isEqualTo("AppendOutcomes[1+1 APPENDED, 2+3 DUPLICATE]");
        assertThat(AppendReplies.decode(java.util.Arrays.copyOf(whole, whole.length - 1))).isNull();
        final byte[] plain = AppendReplies.appendResult(5, 2);
        assertThat(AppendReplies.decode(java.util.Arrays.copyOf(plain, plain.length - 1))).isNull();
        assertThat(AppendReplies.decode(new byte[0])).isNull();
        assertThat(AppendReplies.decode(PartitionState.NO_REPLY)).isNull();
        assertThatThrownBy(() -> AppendReplies.decode(whole).firstPosition(2)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    private static AppendBatcher.AppendId id(final long n)
    {
        return new AppendBatcher.AppendId(IdempotencyScope.CLIENT, n, ~n, 99, 60_000);
    }

    /** A batch as the command API encodes one: a whole AppendEntry with these keys and {@code {}} payloads. */
    private static byte[] batch(final String... keys)
    {
        long length = AppendEntries.BATCH_ELEMENTS_OFFSET;
        for (final String key : keys)
        {
            length += AppendEntries.recordLength(key.length(), 2);
        }
        final byte[] bytes = new byte[(int)length];
        final AppendEntryEncoder.RecordsEncoder records = AppendEntries.startBatch(new UnsafeBuffer(bytes))
            .recordsCount(keys.length);
        for (final String key : keys)
        {
            records.next().timestamp(7).key(key).putPayload("{}".getBytes(StandardCharsets.UTF_8), 0, 2);
        }
        return bytes;
    }

    private static List<String> keys(final byte[] entry)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(entry);
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
        assertThat(header.templateId()).isEqualTo(AppendEntryDecoder.TEMPLATE_ID);
        final AppendEntryDecoder decoder = new AppendEntryDecoder()
            .wrap(buffer, header.encodedLength(), header.blockLength(), header.version());
        final List<String> keys = new ArrayList<>();
        for (final AppendEntryDecoder.RecordsDecoder record : decoder.records())
        {
            record.timestamp();
            keys.add(record.key());
            final byte[] payload = new byte[record.payloadLength()];
            record.getPayload(payload, 0, payload.length);
            assertThat(new String(payload, StandardCharsets.UTF_8)).isEqualTo("{}");
        }
        return keys;
    }
}
