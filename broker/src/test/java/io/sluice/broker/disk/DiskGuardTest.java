package io.sluice.broker.disk;

import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DiskGuardTest
{
    private static final long MIB = 1024 * 1024;

    @TempDir
    Path dir;

    private final AtomicLong free = new AtomicLong(900 * MIB);
    private final AtomicLong now = new AtomicLong();
    private final DiskGuard.Volume volume = new DiskGuard.Volume()
    {
        @Override
        public long totalBytes()
        {
            return 1000 * MIB;
        }

        @Override
        public long freeBytes()
        {
            return free.get();
        }
    };

    @Test
    void appendsAreRefusedPastTheHighWatermarkNamingTheBrokerAndTakenAgainOnceBelow()
    {
        final DiskGuard guard = new DiskGuard(1, dir, new DiskWatermark(0.90, 10 * MIB), volume, now::get, 250);
        assertThat(guard.refusal()).isNull();

        free.set(90 * MIB);
        now.addAndGet(250_000_000L);
        assertThat(guard.refusal()).startsWith("broker 1: 91% of " + dir.toAbsolutePath() + "'s volume used")
            .contains("sluice.broker.disk.high-watermark");
        assertThat(guard.usedRatio()).isEqualTo(0.91);
        assertThat(guard.freeBytes()).isEqualTo(90 * MIB);

        free.set(200 * MIB);
        now.addAndGet(250_000_000L);
        assertThat(guard.refusal()).isNull();
    }

    @Test
    void theVolumeIsReadAgainOnlyAfterTheRefreshInterval()
    {
        final DiskGuard guard = new DiskGuard(1, dir, new DiskWatermark(0.90, 10 * MIB), volume, now::get, 250);
        assertThat(guard.refusal()).isNull();
        free.set(10 * MIB);
        now.addAndGet(100_000_000L);
        assertThat(guard.refusal()).isNull();
        now.addAndGet(150_000_000L);
        assertThat(guard.refusal()).isNotNull();
    }

    @Test
    void onASmallVolumeTheFreeSpaceReserveRefusesBeforeTheWatermark()
    {
        final DiskGuard guard = new DiskGuard(2, dir, new DiskWatermark(0.95, 100 * MIB), volume, now::get, 0);
        free.set(99 * MIB);
        assertThat(guard.refusal()).startsWith("broker 2: 90% of").contains("99 MiB free")
            .contains("sluice.broker.disk.free-space-reserve");
    }

    @Test
    void aSegmentFindingNoSpaceRefusesAppendsAndReleasesTheHeadroomUntilTheVolumeHasRoomAgain() throws IOException
    {
        final DiskGuard guard = new DiskGuard(3, dir, new DiskWatermark(1.0, 0), volume, now::get, 0);
        guard.refresh();
        final Path headroom = dir.resolve(DiskGuard.HEADROOM_FILE);
        assertThat(Files.size(headroom)).isEqualTo(DiskGuard.MAX_HEADROOM_BYTES);
        assertThat(guard.refusal()).isNull();

        free.set(0);
        final long waitMs = guard.segmentSpace().onNoSpace(dir.resolve("segment"), new IOException("No space left on device"));
        assertThat(waitMs).isPositive();
        assertThat(headroom).doesNotExist();
        assertThat(guard.refusal()).startsWith("broker 3: " + dir.toAbsolutePath() + "'s volume is full");

        free.set(500 * MIB);
        assertThat(guard.refusal()).isNull();
        assertThat(Files.size(headroom)).isEqualTo(DiskGuard.MAX_HEADROOM_BYTES);
    }

    @Test
    void aVolumeWithAlmostNothingFreeCountsAsFullAtOnceAndReleasesTheHeadroom() throws IOException
    {
        final DiskGuard guard = new DiskGuard(4, dir, new DiskWatermark(1.0, 0), volume, now::get, 0);
        guard.refresh();
        final Path headroom = dir.resolve(DiskGuard.HEADROOM_FILE);
        assertThat(headroom).exists();

        free.set(1024);
        guard.refresh();
        assertThat(headroom).doesNotExist();
        assertThat(guard.refusal()).startsWith("broker 4: " + dir.toAbsolutePath() + "'s volume is full");
    }

    @Test
    void watermarkSettingsOutOfRangeAreRefusedNamingTheSetting()
    {
        assertThatThrownBy(() -> new DiskWatermark(1.5, 0)).isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.broker.disk.high-watermark: ").hasMessageContaining("1.5");
        assertThatThrownBy(() -> new DiskWatermark(0, 0)).isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.broker.disk.high-watermark: ");
        assertThatThrownBy(() -> new DiskWatermark(Double.NaN, 0)).isInstanceOf(InvalidClusterConfigException.class);
        assertThatThrownBy(() -> new DiskWatermark(0.9, -1)).isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.broker.disk.free-space-reserve: ");
    }
}
