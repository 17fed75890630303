package io.sluice.gateway.exporting;

import io.sluice.protocol.message.AdminLimits;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

class ExportingVersionSequenceTest
{
    private static final Instant NOW = Instant.parse("2026-12-01T00:00:00Z");
    private static final long NOW_MICROS = NOW.getEpochSecond() * 1_000_000L;
    private final ExportingVersionSequence versions = new ExportingVersionSequence(Clock.fixed(NOW, ZoneOffset.UTC));

    @Test
    void versionsFollowTheClockAndStrictlyIncreaseWhenItStandsStill()
    {
        assertThat(versions.next(0)).isEqualTo(NOW_MICROS);
        assertThat(versions.next(0)).isEqualTo(NOW_MICROS + 1);
        assertThat(versions.next(5)).isEqualTo(NOW_MICROS + 2);
    }

    @Test
    void aFloorFromAnotherGatewaysClockAheadIsFollowed()
    {
        final long floor = NOW_MICROS + 60_000_000L;
        assertThat(versions.next(floor)).isEqualTo(floor + 1);
    }

    @Test
    void aFloorAtLongMaxValueIsIgnoredAndNothingOverflows()
    {
        final long version = versions.next(Long.MAX_VALUE);
        assertThat(version).isEqualTo(NOW_MICROS);
        assertThat(versions.next(Long.MAX_VALUE)).isGreaterThan(version);
        final long beyondSkew = AdminLimits.maxVersionAt(NOW_MICROS) + 1;
        assertThat(versions.next(beyondSkew)).isLessThanOrEqualTo(AdminLimits.maxVersionAt(NOW_MICROS));
    }

    @Test
    void aFloorAtTheSkewLimitNeverTakesAVersionBeyondIt()
    {
        final long limit = AdminLimits.maxVersionAt(NOW_MICROS);
        for (int i = 0; i < 3; i++)
        {
            assertThat(versions.next(limit)).isLessThanOrEqualTo(limit).isPositive();
        }
    }
}
