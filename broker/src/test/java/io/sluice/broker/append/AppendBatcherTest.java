package io.sluice.broker.append;

import io.sluice.broker.errors.PartitionException;
import io.sluice.broker.log.codecs.AppendOutcome;
import io.sluice.broker.log.codecs.IdempotencyScope;
import org.agrona.BufferUtil;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AppendBatcherTest
{
    private final List<ByteString> entries = new ArrayList<>();
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
    void batchesQueuedWhileEntriesAreInFlightShareOneEntryAndSplitItsPositions() throws Exception
    {
        final List<CompletableFuture<AppendPositions>> first = new ArrayList<>();
        for (int i = 0; i < AppendBatcher.MAX_IN_FLIGHT; i++)
        {
            first.add(batcher.append(batch("a" + i)));
        }
        assertThat(entries).hasSize(AppendBatcher.MAX_IN_FLIGHT);

        final CompletableFuture<AppendPositions> x = batcher.append(batch("x1", "x2"));
        final CompletableFuture<AppendPositions> y = batcher.append(batch("y1"));
        assertThat(entries).as("queued while the window is full").hasSize(AppendBatcher.MAX_IN_FLIGHT);

        replies.get(0).complete(AppendOutcomes.appended(1, 1));
        assertThat(first.get(0).join()).isEqualTo(new AppendPositions(1, 1));
        assertThat(entries).hasSize(AppendBatcher.MAX_IN_FLIGHT + 1);
        assertThat(keys(entries.get(AppendBatcher.MAX_IN_FLIGHT))).containsExactly("x1", "x2", "y1");

        replies.get(AppendBatcher.MAX_IN_FLIGHT).complete(AppendOutcomes.appended(10, 3));
        assertThat(x.join()).isEqualTo(new AppendPositions(10, 2));
        assertThat(y.join()).isEqualTo(new AppendPositions(12, 1));
    }

    /**
     * The copy the batcher used to make: an entry of one batch is a view of the batch's own array, an entry of several
     * (with ids or without, with batches of no records or tiny ones) is a rope whose pieces are the batches' arrays.
     */
    @Test
    @Timeout(10)
    void anEntryIsAViewOfItsBatchOrARopeOverTheBatchesOwnArraysNeverACopy() throws Exception
    {
        final byte[] lone = batch("a");
        final byte[] loneWithId = batch(id(1), "b");
        batcher.append(lone);
        batcher.append(loneWithId);
        batcher.append(batch("c"));
        batcher.append(batch("d"));
        final byte[][] queued = {batch("x1", "x2"), batch(id(2)), batch(id(3)), batch("y"), batch(id(4), "z")};
        for (final byte[] batch : queued)
        {
            batcher.append(batch);
        }
        assertThat(entries).hasSize(AppendBatcher.MAX_IN_FLIGHT);
        replies.get(0).complete(AppendOutcomes.appended(1, 1));

        assertThat(entries).hasSize(AppendBatcher.MAX_IN_FLIGHT + 1);
        assertSharesArrays(entries.get(0), lone);
        assertSharesArrays(entries.get(1), loneWithId);
        assertSharesArrays(entries.get(AppendBatcher.MAX_IN_FLIGHT), queued);
        assertThat(keys(entries.get(AppendBatcher.MAX_IN_FLIGHT))).containsExactly("x1", "x2", "y", "z");
    }

    @Test
    @Timeout(10)
    void aFailedEntryFailsEveryBatchInIt()
    {
        final CompletableFuture<AppendPositions> a = batcher.append(batch("a"));
        replies.get(0).completeExceptionally(new IllegalStateException("not leader"));
        assertThat(a).isCompletedExceptionally();
    }

    @Test
    @Timeout(10)
    void anIdempotentEntryAnswersEachBatchItsOwnPositionsAndFailsOnlyTheConflictingOne()
    {
        final CompletableFuture<AppendPositions> plain = batcher.append(batch("p"));
        final CompletableFuture<AppendPositions> duplicate = batcher.append(batch(id(1), "d1", "d2"));
        final CompletableFuture<AppendPositions> conflict = batcher.append(batch(id(2), "c"));
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
        final CompletableFuture<AppendPositions> a = batcher.append(batch(id(1), "a"));
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
        assertThat(AppendReplies.decode(AppendReplies.NO_REPLY)).isNull();
        assertThatThrownBy(() -> AppendReplies.decode(whole).firstPosition(2)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    private static AppendBatcher.AppendId id(final long n)
    {
        return new AppendBatcher.AppendId(IdempotencyScope.CLIENT, n, ~n, 99, 60_000);
    }

    /** A batch as the command API encodes one, without an id: records with these keys and {@code {}} payloads. */
    private static byte[] batch(final String... keys)
    {
        return batch(null, keys);
    }

    private static byte[] batch(final AppendBatcher.AppendId id, final String... keys)
    {
        final String[] records = new String[keys.length];
        for (int i = 0; i < keys.length; i++)
        {
            records[i] = keys[i] + "={}";
        }
        return PartitionEntries.batch(id, 7, false, records);
    }

    /** The entry's pieces are the batches' arrays, in order, each to its end: no byte of a batch was copied. */
    private static void assertSharesArrays(final ByteString entry, final byte[]... batches)
    {
        final List<ByteBuffer> pieces = entry.asReadOnlyByteBufferList();
        assertThat(pieces).as("one piece for each batch").hasSize(batches.length);
        for (int i = 0; i < batches.length; i++)
        {
            final ByteBuffer piece = pieces.get(i);
            assertThat(BufferUtil.array(piece)).as("piece %d is batch %d's own array", i, i).isSameAs(batches[i]);
            assertThat(piece.position() + piece.remaining()).as("piece %d runs to its batch's end", i)
                .isEqualTo(batches[i].length);
        }
    }

    private static List<String> keys(final ByteString entry) throws java.io.IOException
    {
        final List<String> keys = new ArrayList<>();
        for (final String record : PartitionEntries.records(entry))
        {
            assertThat(record).endsWith("={}");
            keys.add(record.substring(0, record.length() - 3));
        }
        return keys;
    }
}
