package io.sluice.broker;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PreferredLeaderWatchTest
{
    private static final long SECOND = 1_000_000_000L;

    private final PreferredLeaderWatch watch = new PreferredLeaderWatch(Duration.ofSeconds(3));

    @Test
    void aReplicaInSyncForTheWholeStablePeriodMayLeadAgain()
    {
        assertThat(watch.observe(1, true, 10 * SECOND)).isFalse();
        assertThat(watch.observe(1, true, 12 * SECOND)).isFalse();
        assertThat(watch.observe(1, true, 13 * SECOND)).isTrue();
    }

    @Test
    void oneCheckOutOfSyncStartsThePeriodOver()
    {
        watch.observe(1, true, 10 * SECOND);
        watch.observe(1, false, 12 * SECOND);
        assertThat(watch.observe(1, true, 13 * SECOND)).isFalse();
        assertThat(watch.observe(1, true, 15 * SECOND)).isFalse();
        assertThat(watch.observe(1, true, 16 * SECOND)).isTrue();
    }

    @Test
    void forgettingAPartitionStartsItsPeriodOverAndLeavesTheOthersAlone()
    {
        watch.observe(1, true, 10 * SECOND);
        watch.observe(2, true, 10 * SECOND);
        watch.forget(1);
        assertThat(watch.observe(1, true, 13 * SECOND)).isFalse();
        assertThat(watch.observe(2, true, 13 * SECOND)).isTrue();
    }

    @Test
    void aNegativePeriodIsRefused()
    {
        assertThatThrownBy(() -> new PreferredLeaderWatch(Duration.ofSeconds(-1)))
            .isInstanceOf(IllegalArgumentException.class);
    }
}
