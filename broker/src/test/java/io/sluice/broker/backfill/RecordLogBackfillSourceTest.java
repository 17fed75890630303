package io.sluice.broker.backfill;

import io.sluice.broker.log.RecordLog;
import io.sluice.exporter.spi.CommittedRecord;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Backfill reads from the record log: what a sink sees, and that the log is not held while it looks. */
class RecordLogBackfillSourceTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(30)
    void aSinkSlowToTakeABackfilledRecordDoesNotHoldUpAppends() throws Exception
    {
        try (RecordLog log = RecordLog.open(dir, 1 << 20, 0, 0))
        {
            append(log, 1, "{\"n\":1}");
            append(log, 2, "{\"n\":2}");
            final RecordLogBackfillSource source = new RecordLogBackfillSource(1, () -> log);
            final List<String> seen = new ArrayList<>();

            source.read(1, 2, 10, (record) ->
            {
                // The sink is still busy with a record while the partition appends the next ones.
                final CompletableFuture<Long> appended = CompletableFuture.supplyAsync(() -> append(log, 0, "{}"));
                assertThat(appended.get(5, TimeUnit.SECONDS)).isGreaterThan(2);
                seen.add(record.position() + ":" + payload(record));
            });

            assertThat(seen).containsExactly("1:{\"n\":1}", "2:{\"n\":2}");
            assertThat(log.lastPosition()).isEqualTo(4);
        }
    }

    @Test
    void aFailingSinkGetsNoRecordAfterTheOneItFailedOn() throws Exception
    {
        try (RecordLog log = RecordLog.open(dir, 1 << 20, 0, 0))
        {
            for (int i = 1; i <= 5; i++)
            {
                append(log, i, "{\"n\":" + i + "}");
            }
            final RecordLogBackfillSource source = new RecordLogBackfillSource(1, () -> log);
            final List<Long> seen = new ArrayList<>();

            assertThatThrownBy(() -> source.read(1, 5, 10, (record) ->
            {
                seen.add(record.position());
                if (record.position() == 3)
                {
                    throw new IllegalStateException("sink refused record 3");
                }
            })).hasMessage("sink refused record 3");

            assertThat(seen).containsExactly(1L, 2L, 3L);
        }
    }

    private static long append(final RecordLog log, final long raftIndex, final String payload)
    {
        final byte[] bytes = payload.getBytes(StandardCharsets.UTF_8);
        try
        {
            final long position = log.append(raftIndex, System.currentTimeMillis(), null, 0, -1,
                new UnsafeBuffer(bytes), 0, bytes.length);
            log.flushWrites();
            return position;
        }
        catch (final java.io.IOException e)
        {
            throw new IllegalStateException(e);
        }
    }

    private static String payload(final CommittedRecord record)
    {
        return record.buffer().getStringWithoutLengthUtf8(record.payloadOffset(), record.payloadLength());
    }
}
