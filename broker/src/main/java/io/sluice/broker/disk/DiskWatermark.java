package io.sluice.broker.disk;

import io.sluice.protocol.cluster.InvalidClusterConfigException;

/**
 * When a broker stops taking appends for its disk: once its data directory's volume is used past
 * {@code highWatermark} (a share of the volume), or has less than {@code freeSpaceReserveBytes} free (what counts on
 * a small volume), whichever comes first.
 */
public record DiskWatermark(double highWatermark, long freeSpaceReserveBytes)
{
    public static final String HIGH_WATERMARK_SETTING = "sluice.broker.disk.high-watermark";
    public static final String FREE_SPACE_RESERVE_SETTING = "sluice.broker.disk.free-space-reserve";
    public static final double DEFAULT_HIGH_WATERMARK = 0.90;
    public static final long DEFAULT_FREE_SPACE_RESERVE_BYTES = 512L * 1024 * 1024;
    public static final DiskWatermark DEFAULT = new DiskWatermark(DEFAULT_HIGH_WATERMARK, DEFAULT_FREE_SPACE_RESERVE_BYTES);

    public DiskWatermark
    {
        // 1.0 turns the share off (only the reserve counts); below 0.05 a broker could take almost no records.
        if (!(highWatermark >= 0.05 && highWatermark <= 1.0))
        {
            throw new InvalidClusterConfigException(HIGH_WATERMARK_SETTING,
                "must be a share of the volume from 0.05 to 1.0 (0.90 is 90 %), was " + highWatermark);
        }
        if (freeSpaceReserveBytes < 0)
        {
            throw new InvalidClusterConfigException(FREE_SPACE_RESERVE_SETTING,
                "must not be negative (0 turns it off), was " + freeSpaceReserveBytes + " bytes");
        }
    }

    /** Whether a volume of {@code totalBytes} with {@code freeBytes} free is past this watermark. */
    public boolean isPast(final long totalBytes, final long freeBytes)
    {
        return freeBytes < freeSpaceReserveBytes || usedRatio(totalBytes, freeBytes) > highWatermark;
    }

    public static double usedRatio(final long totalBytes, final long freeBytes)
    {
        return totalBytes <= 0 ? 0 : (double)(totalBytes - freeBytes) / totalBytes;
    }
}
