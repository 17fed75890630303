package io.sluice.broker.append;

import io.sluice.broker.partition.PartitionSnapshot;
import io.sluice.broker.log.codecs.IdempotencyScope;
import io.sluice.broker.log.codecs.IdempotencySnapshotEncoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AppendIdempotencyTest
{
    @Test
    void aRememberedIdAnswersItsPositionsAndDigestUntilItsWindowEnds()
    {
        final AppendIdempotency ids = new AppendIdempotency();
        ids.advanceClock(1_000);
        final IdempotencyTable clients = ids.table(IdempotencyScope.CLIENT);
        clients.put(11, 12, 99, 40, 3, 1_000 + 500);

        int slot = clients.find(11, 12, ids.clockMs());
        assertThat(slot).isNotNegative();
        assertThat(clients.firstPosition(slot)).isEqualTo(40);
        assertThat(clients.count(slot)).isEqualTo(3);
        assertThat(clients.digest(slot)).isEqualTo(99);
        assertThat(clients.find(11, 13, ids.clockMs())).as("same high half, other low half").isEqualTo(-1);
        assertThat(ids.table(IdempotencyScope.GATEWAY).find(11, 12, ids.clockMs())).as("scopes are apart").isEqualTo(-1);

        ids.advanceClock(1_499);
        assertThat(clients.find(11, 12, ids.clockMs())).isNotNegative();
        ids.advanceClock(1_500);
        assertThat(clients.find(11, 12, ids.clockMs())).isEqualTo(-1);
        assertThat(ids.clientKeyCount()).isZero();
    }

    @Test
    void theReplicatedClockNeverMovesBackSoAnExpiredIdStaysForgotten()
    {
        final AppendIdempotency ids = new AppendIdempotency();
        ids.advanceClock(10_000);
        ids.table(IdempotencyScope.CLIENT).put(1, 2, 3, 1, 1, 10_100);
        ids.advanceClock(10_200);
        ids.advanceClock(9_000); // a new leader whose clock is behind
        assertThat(ids.clockMs()).isEqualTo(10_200);
        assertThat(ids.table(IdempotencyScope.CLIENT).find(1, 2, ids.clockMs())).isEqualTo(-1);
    }

    @Test
    void noScopeHasNoTable()
    {
        assertThat(new AppendIdempotency().table(IdempotencyScope.NONE)).isNull();
        assertThat(new AppendIdempotency().table(IdempotencyScope.NULL_VAL)).isNull();
    }

    @Test
    void aFullTableForgetsItsOldestIdFirstAndCountsIt()
    {
        final IdempotencyTable table = new IdempotencyTable(3);
        for (int i = 1; i <= 4; i++)
        {
            table.put(i, i, i, i, 1, Long.MAX_VALUE);
        }
        assertThat(table.size()).isEqualTo(3);
        assertThat(table.find(1, 1, 0)).isEqualTo(-1);
        assertThat(table.find(4, 4, 0)).isNotNegative();
        assertThat(table.evictedBeforeExpiry()).isEqualTo(1);
    }

    @Test
    void anIdPutAgainAfterExpiryIsFoundWithItsNewPositionsAndTheOldCopyLeavesQuietly()
    {
        final IdempotencyTable table = new IdempotencyTable(16);
        table.put(5, 6, 7, 10, 1, 100);
        table.put(8, 8, 8, 11, 1, 1_000);
        table.put(5, 6, 7, 20, 1, 2_000); // the same id after its window, at a later time
        table.expire(150); // the first copy expired at 100 and goes; the index keeps the new one
        assertThat(table.find(5, 6, 150)).isNotNegative();
        assertThat(table.firstPosition(table.find(5, 6, 150))).isEqualTo(20);
        assertThat(table.size()).isEqualTo(2);
    }

    @Test
    void aSnapshotRoundTripKeepsEveryIdInOrderWithItsExpiry()
    {
        final AppendIdempotency ids = new AppendIdempotency();
        ids.advanceClock(5_000);
        for (int i = 0; i < 1_000; i++)
        {
            ids.table(IdempotencyScope.CLIENT).put(i, -i, i * 7L, i * 10L, i % 5, 5_000 + i);
        }
        ids.table(IdempotencyScope.GATEWAY).put(42, 43, 44, 45, 2, 9_000);

        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer();
        final int length = ids.write(buffer, 8);
        assertThat(length).isEqualTo(ids.snapshotLength());

        final AppendIdempotency restored = new AppendIdempotency();
        restored.read(buffer, 8, length);
        assertThat(restored.clockMs()).isEqualTo(5_000);
        assertThat(restored.clientKeyCount()).isEqualTo(1_000);
        assertThat(restored.gatewayIdCount()).isEqualTo(1);
        final IdempotencyTable clients = restored.table(IdempotencyScope.CLIENT);
        final int slot = clients.find(500, -500, restored.clockMs());
        assertThat(clients.firstPosition(slot)).isEqualTo(5_000);
        assertThat(clients.count(slot)).isEqualTo(0);
        assertThat(clients.digest(slot)).isEqualTo(3_500);
        assertThat(restored.table(IdempotencyScope.GATEWAY).firstPosition(
            restored.table(IdempotencyScope.GATEWAY).find(42, 43, 5_000))).isEqualTo(45);

        restored.advanceClock(5_500); // expires the first 501 in order, as the original would
        ids.advanceClock(5_500);
        assertThat(restored.clientKeyCount()).isEqualTo(ids.clientKeyCount()).isEqualTo(499);
    }

    @Test
    void aSnapshotThatClaimsMoreIdsThanItHoldsOrIsCutShortIsRefusedAndLeavesNothing()
    {
        final AppendIdempotency ids = new AppendIdempotency();
        ids.advanceClock(1_000);
        for (int i = 0; i < 3; i++)
        {
            ids.table(IdempotencyScope.CLIENT).put(i, i, i, i, 1, 9_000);
        }
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer();
        final int length = ids.write(buffer, 0);
        // The client scope's ids count: after the header, the clock, the scopes' group header, the scope's block and
        // the ids' block length.
        final int idsCount = MessageHeaderEncoder.ENCODED_LENGTH + IdempotencySnapshotEncoder.BLOCK_LENGTH +
            IdempotencySnapshotEncoder.ScopesEncoder.sbeHeaderSize() + IdempotencySnapshotEncoder.ScopesEncoder.sbeBlockLength() +
            Short.BYTES;
        final UnsafeBuffer lying = new UnsafeBuffer(Arrays.copyOf(buffer.byteArray(), length));
        lying.putInt(idsCount, 1_000, ByteOrder.LITTLE_ENDIAN);
        final AppendIdempotency restored = new AppendIdempotency();
        assertThatThrownBy(() -> restored.read(lying, 0, length))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1000 ids");

        assertThatThrownBy(() -> restored.read(buffer, 0, length - 10))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("truncated");
        assertThat(restored.clientKeyCount()).isZero();
        assertThat(restored.clockMs()).isZero();

        assertThatThrownBy(() -> restored.read(new UnsafeBuffer(new byte[16]), 0, 16))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not an idempotency snapshot");
    }

    @Test
    void aSnapshotOfMoreIdsThanSixteenMebibytesHoldGoesThroughThePartitionSnapshot() throws IOException
    {
        // 400,000 ids are 17.6 MB in a snapshot: the partition snapshot's section took at most 16 MiB before, so a
        // partition remembering that many ids could take no snapshot at all.
        final AppendIdempotency ids = new AppendIdempotency();
        ids.advanceClock(1_000);
        final int keys = 400_000;
        for (int i = 0; i < keys; i++)
        {
            ids.table(IdempotencyScope.CLIENT).put(mix(i), mix(~i), i, i, 1, 1_000_000 + i);
        }
        final byte[] section = new byte[ids.snapshotLength()];
        final int length = ids.write(new UnsafeBuffer(section), 0);
        assertThat(length).isEqualTo(section.length).isGreaterThan(16 * 1024 * 1024);

        final byte[] file = new PartitionSnapshot(7, 9, Map.of(), PartitionSnapshot.NO_BACKFILLS, section).encode();
        final PartitionSnapshot decoded = PartitionSnapshot.decode(new UnsafeBuffer(file), 0, file.length, "test");
        final AppendIdempotency restored = new AppendIdempotency();
        restored.read(new UnsafeBuffer(decoded.idempotency()), 0, decoded.idempotency().length);

        assertThat(restored.clientKeyCount()).isEqualTo(keys);
        assertThat(restored.clockMs()).isEqualTo(1_000);
        final IdempotencyTable clients = restored.table(IdempotencyScope.CLIENT);
        assertThat(clients.firstPosition(clients.find(mix(keys - 1), mix(~(keys - 1)), 1_000))).isEqualTo(keys - 1);
    }

    @Test
    void aMillionClientKeysStayWithinTheBoundAndReportTheirMemory()
    {
        final AppendIdempotency ids = new AppendIdempotency();
        final IdempotencyTable clients = ids.table(IdempotencyScope.CLIENT);
        System.gc();
        final Runtime runtime = Runtime.getRuntime();
        final long heapBefore = runtime.totalMemory() - runtime.freeMemory();
        final int keys = 1_000_000;
        for (int i = 0; i < keys; i++)
        {
            clients.put(mix(i), mix(~i), i, i, 1, Long.MAX_VALUE);
        }
        System.gc();
        final long heapAfter = runtime.totalMemory() - runtime.freeMemory();
        final long allocated = ids.allocatedBytes();
        final int snapshotBytes = ids.snapshotLength();
        System.out.printf("idempotency: %,d client keys: %,d bytes allocated (%.1f bytes/key), heap grew %,d bytes " +
            "(%.1f bytes/key), snapshot %,d bytes (%.1f bytes/key)%n", keys, allocated, (double)allocated / keys,
            heapAfter - heapBefore, (double)(heapAfter - heapBefore) / keys, snapshotBytes, (double)snapshotBytes / keys);
        assertThat(clients.size()).isEqualTo(keys);
        assertThat(allocated).isLessThan(100L * keys);
        for (int i = 0; i < keys; i += 997)
        {
            assertThat(clients.find(mix(i), mix(~i), 0)).isNotNegative();
        }

        // Past the bound the table stays the same size: the oldest keys go first.
        final int more = AppendIdempotency.MAX_CLIENT_KEYS - keys + 10;
        for (int i = 0; i < more; i++)
        {
            clients.put(mix(keys + i), 1, 1, 1, 1, Long.MAX_VALUE);
        }
        assertThat(clients.size()).isEqualTo(AppendIdempotency.MAX_CLIENT_KEYS);
        assertThat(clients.evictedBeforeExpiry()).isEqualTo(10);
        assertThat(ids.allocatedBytes()).isLessThan(100L * AppendIdempotency.MAX_CLIENT_KEYS);
    }

    private static long mix(final long value)
    {
        long z = value * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        return z ^ (z >>> 31);
    }
}
