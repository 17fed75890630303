package io.sluice.gateway.records;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(10)
class PartitionSelectorTest
{
    @Test
    void murmur3MatchesTheReferenceVectors()
    {
        assertThat(PartitionSelector.murmur3(new byte[0])).isEqualTo(0);
        assertThat(PartitionSelector.murmur3(
            "The quick brown fox jumps over the lazy dog".getBytes(StandardCharsets.UTF_8))).isEqualTo(0x2e4ff723);
    }

    @Test
    void sameKeyAlwaysPicksTheSamePartitionAcrossSelectors()
    {
        final PartitionSelector one = new PartitionSelector(6);
        final PartitionSelector other = new PartitionSelector(6);
        for (int i = 0; i < 1000; i++)
        {
            final String key = "order-" + i;
            final int partition = one.partitionFor(key);
            assertThat(partition).isBetween(1, 6);
            assertThat(one.partitionFor(key)).isEqualTo(partition);
            assertThat(other.partitionFor(key)).isEqualTo(partition);
        }
    }

    @Test
    void keysSpreadOverEveryPartition()
    {
        final PartitionSelector selector = new PartitionSelector(6);
        final Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 100; i++)
        {
            seen.add(selector.partitionFor("k" + i));
        }
        assertThat(seen).containsExactlyInAnyOrder(1, 2, 3, 4, 5, 6);
    }

    @Test
    void recordsWithoutKeyGoRoundRobin()
    {
        final PartitionSelector selector = new PartitionSelector(3);
        assertThat(new int[]{selector.partitionFor(null), selector.partitionFor(null), selector.partitionFor(null),
            selector.partitionFor(null)}).containsExactly(1, 2, 3, 1);
    }
}
