package io.sluice.cli;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class BackfillProgressTest
{
    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    @Test
    void withoutTotalsTheTasksInclusiveRangesAreSummed()
    {
        // [10, 19] fully exported, [20, 29] exported up to 24, [30, 39] not started.
        final BackfillProgress progress = BackfillProgress.of(MAPPER.readTree("{\"backfillId\": \"b\", \"state\": \"RUNNING\","
            + " \"tasks\": [{\"fromPosition\": 10, \"toPosition\": 19, \"exportedUpTo\": 19},"
            + " {\"fromPosition\": 20, \"toPosition\": 29, \"exportedUpTo\": 24},"
            + " {\"fromPosition\": 30, \"toPosition\": 39, \"exportedUpTo\": 29}]}"));

        assertThat(progress.totalRecords()).isEqualTo(30);
        assertThat(progress.exportedRecords()).isEqualTo(15);
        assertThat(progress.fraction()).isCloseTo(0.5, within(1e-9));
        assertThat(progress.isTerminal()).isFalse();
    }

    @Test
    void theGatewaysTotalsWin()
    {
        final BackfillProgress progress = BackfillProgress.of(MAPPER.readTree("{\"state\": \"SUCCEEDED\", \"progress\": 1.0,"
            + " \"exportedPositions\": 7, \"totalPositions\": 7, \"tasks\": []}"));

        assertThat(progress.exportedRecords()).isEqualTo(7);
        assertThat(progress.fraction()).isEqualTo(1.0);
        assertThat(progress.isTerminal()).isTrue();
    }

    @Test
    void anEmptyBackfillThatSucceededIsComplete()
    {
        assertThat(BackfillProgress.of(MAPPER.readTree("{\"state\": \"SUCCEEDED\"}")).fraction()).isEqualTo(1.0);
        assertThat(BackfillProgress.of(MAPPER.readTree("{\"state\": \"PENDING\"}")).fraction()).isEqualTo(0.0);
    }
}
