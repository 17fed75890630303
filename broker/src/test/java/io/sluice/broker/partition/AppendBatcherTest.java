package io.sluice.broker.partition;

import io.sluice.broker.log.codecs.AppendEntryDecoder;
import io.sluice.broker.log.codecs.AppendEntryEncoder;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

class AppendBatcherTest
{
    private final List<byte[]> entries = new ArrayList<>();
    private final List<CompletableFuture<long[]>> replies = new ArrayList<>();
    private final AppendBatcher batcher = new AppendBatcher((entry) ->
    {
        entries.add(entry);
        final CompletableFuture<long[]> reply = new CompletableFuture<>();
        replies.add(reply);
        return reply;
    });

    @Test
    @Timeout(10)
    void batchesQueuedWhileEntriesAreInFlightShareOneEntryAndSplitItsPositions()
    {
        final List<CompletableFuture<long[]>> first = new ArrayList<>();
        for (int i = 0; i < AppendBatcher.MAX_IN_FLIGHT; i++)
        {
            first.add(batcher.append(batch("a" + i), 1));
        }
        assertThat(entries).hasSize(AppendBatcher.MAX_IN_FLIGHT);

        final CompletableFuture<long[]> x = batcher.append(batch("x1", "x2"), 2);
        final CompletableFuture<long[]> y = batcher.append(batch("y1"), 1);
        assertThat(entries).as("queued while the window is full").hasSize(AppendBatcher.MAX_IN_FLIGHT);

        replies.get(0).complete(new long[] {1, 1});
        assertThat(first.get(0).join()).containsExactly(1, 1);
        assertThat(entries).hasSize(AppendBatcher.MAX_IN_FLIGHT + 1);
        assertThat(keys(entries.get(AppendBatcher.MAX_IN_FLIGHT))).containsExactly("x1", "x2", "y1");

        replies.get(AppendBatcher.MAX_IN_FLIGHT).complete(new long[] {10, 3});
        assertThat(x.join()).containsExactly(10, 2);
        assertThat(y.join()).containsExactly(12, 1);
    }

    @Test
    @Timeout(10)
    void aFailedEntryFailsEveryBatchInIt()
    {
        final CompletableFuture<long[]> a = batcher.append(batch("a"), 1);
        replies.get(0).completeExceptionally(new IllegalStateException("not leader"));
        assertThat(a).isCompletedExceptionally();
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
