package io.sluice.broker.partition;

import io.sluice.broker.log.codecs.AppendEntryDecoder;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteOrder;
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
            first.add(batcher.append(elements("a" + i), 1));
        }
        assertThat(entries).hasSize(AppendBatcher.MAX_IN_FLIGHT);

        final CompletableFuture<long[]> x = batcher.append(elements("x1", "x2"), 2);
        final CompletableFuture<long[]> y = batcher.append(elements("y1"), 1);
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
        final CompletableFuture<long[]> a = batcher.append(elements("a"), 1);
        replies.get(0).completeExceptionally(new IllegalStateException("not leader"));
        assertThat(a).isCompletedExceptionally();
    }

    private static byte[] elements(final String... keys)
    {
        int length = 0;
        for (final String key : keys)
        {
            length += 8 + 4 + key.length() + 4 + 2;
        }
        final byte[] bytes = new byte[length];
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        int cursor = 0;
        for (final String key : keys)
        {
            buffer.putLong(cursor, 7, ByteOrder.LITTLE_ENDIAN);
            cursor += 8;
            buffer.putInt(cursor, key.length(), ByteOrder.LITTLE_ENDIAN);
            cursor += 4;
            cursor += buffer.putStringWithoutLengthAscii(cursor, key);
            buffer.putInt(cursor, 2, ByteOrder.LITTLE_ENDIAN);
            cursor += 4;
            cursor += buffer.putStringWithoutLengthAscii(cursor, "{}");
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
