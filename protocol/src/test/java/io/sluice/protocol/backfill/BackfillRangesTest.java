package io.sluice.protocol.backfill;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(10)
class BackfillRangesTest
{
    @Test
    void splitsEvenlyInPositionOrderWithTheRemainderUpFront()
    {
        final List<BackfillRanges.Range> ranges = BackfillRanges.split(118, 240, 4); // 122 positions

        assertThat(ranges).containsExactly(
            new BackfillRanges.Range(119, 149),
            new BackfillRanges.Range(150, 180),
            new BackfillRanges.Range(181, 210),
            new BackfillRanges.Range(211, 240));
    }

    @Test
    void oneTaskTakesTheWholeRange()
    {
        assertThat(BackfillRanges.split(0, 10, 1)).containsExactly(new BackfillRanges.Range(1, 10));
    }

    @Test
    void tasksBeyondThePositionsGetEmptyRangesAfterTheEnd()
    {
        final List<BackfillRanges.Range> ranges = BackfillRanges.split(5, 7, 4);

        assertThat(ranges).containsExactly(
            new BackfillRanges.Range(6, 6),
            new BackfillRanges.Range(7, 7),
            new BackfillRanges.Range(8, 7),
            new BackfillRanges.Range(8, 7));
        assertThat(ranges.get(2).isEmpty()).isTrue();
        assertThat(ranges.stream().mapToLong(BackfillRanges.Range::length).sum()).isEqualTo(2);
    }

    @Test
    void anExporterAlreadyAtTheEndGivesEmptyRanges()
    {
        assertThat(BackfillRanges.split(240, 240, 2)).allMatch(BackfillRanges.Range::isEmpty);
    }

    @Test
    void rejectsANonPositiveTaskCount()
    {
        assertThatThrownBy(() -> BackfillRanges.split(0, 10, 0)).hasMessageContaining("was 0");
    }
}
