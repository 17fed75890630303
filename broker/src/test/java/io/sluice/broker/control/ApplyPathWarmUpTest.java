package io.sluice.broker.control;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The start's scratch apply of exporting changes: every change decodes and is taken, as on a real replica. */
class ApplyPathWarmUpTest
{
    @Test
    void everyRoundsChangeReachesEveryPartitionsWaiter()
    {
        assertThat(ApplyPathWarmUp.run(0, 48, 16)).isEqualTo(16 * 48);
    }

    @Test
    void aClusterOfOnePartitionIsWarmedToo()
    {
        assertThat(ApplyPathWarmUp.run(2, 1, 3)).isEqualTo(3);
    }
}
