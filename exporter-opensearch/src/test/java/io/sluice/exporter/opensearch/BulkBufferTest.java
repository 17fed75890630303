package io.sluice.exporter.opensearch;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

final class BulkBufferTest
{
    private static BulkBuffer.Document document(final long position, final int bytes)
    {
        return new BulkBuffer.Document(position, "1-" + position, "{}", bytes);
    }

    @Test
    void aBulkIsBoundedByRecordCount()
    {
        final BulkBuffer buffer = new BulkBuffer(3, 1_000_000, 1_000);
        for (long position = 1; position <= 3; position++)
        {
            assertThat(buffer.fits(10)).isTrue();
            buffer.add(document(position, 10), 0);
        }
        assertThat(buffer.isFull()).isTrue();
        assertThat(buffer.fits(10)).isFalse();
    }

    @Test
    void aBulkIsBoundedByBytesButAnEmptyOneTakesAnOversizedRecordAlone()
    {
        final BulkBuffer buffer = new BulkBuffer(100, 100, 1_000);
        assertThat(buffer.fits(500)).isTrue();
        buffer.add(document(1, 500), 0);
        assertThat(buffer.isFull()).isTrue();
        assertThat(buffer.fits(1)).isFalse();

        final BulkBuffer other = new BulkBuffer(100, 100, 1_000);
        other.add(document(1, 60), 0);
        assertThat(other.fits(40)).isTrue();
        assertThat(other.fits(41)).isFalse();
    }

    @Test
    void aBulkIsDueOnceItsOldestRecordWaitedTheMaximumDelay()
    {
        final BulkBuffer buffer = new BulkBuffer(100, 1_000, 1_000);
        assertThat(buffer.isDue(10_000)).isFalse();
        buffer.add(document(1, 10), 5_000);
        buffer.add(document(2, 10), 5_900);
        assertThat(buffer.isDue(5_999)).isFalse();
        assertThat(buffer.isDue(6_000)).isTrue();
    }

    @Test
    void removingWhatSucceededKeepsTheRestInOrderWithTheirBytes()
    {
        final BulkBuffer buffer = new BulkBuffer(100, 1_000, 1_000);
        for (long position = 1; position <= 4; position++)
        {
            buffer.add(document(position, 10 * (int)position), 0);
        }
        buffer.removeIf(document -> document.position() % 2 == 1);
        assertThat(buffer.lowestPosition()).isEqualTo(2);
        assertThat(buffer.size()).isEqualTo(2);
        assertThat(buffer.bytes()).isEqualTo(60);
    }

    @Test
    void itemsAreClassifiedByStatus()
    {
        assertThat(ItemOutcome.of(200)).isEqualTo(ItemOutcome.SUCCEEDED);
        assertThat(ItemOutcome.of(201)).isEqualTo(ItemOutcome.SUCCEEDED);
        assertThat(ItemOutcome.of(429)).isEqualTo(ItemOutcome.RETRIABLE);
        assertThat(ItemOutcome.of(503)).isEqualTo(ItemOutcome.RETRIABLE);
        assertThat(ItemOutcome.of(400)).isEqualTo(ItemOutcome.REJECTED);
        assertThat(ItemOutcome.of(409)).isEqualTo(ItemOutcome.REJECTED);
    }
}
