package io.sluice.gateway.broker;

/**
 * A broker's disk as its topology answer reports it.
 *
 * @param usedRatio      share of its data directory's volume in use, 0 to 1; NaN when the broker does not say.
 * @param freeBytes      bytes free on that volume; -1 when the broker does not say.
 * @param appendsRefused appends it refused with DISK_FULL since it started.
 */
public record BrokerDisk(double usedRatio, long freeBytes, long appendsRefused)
{
    /** What a broker that predates disk reports (protocol version 4 and older) gives. */
    public static final BrokerDisk UNKNOWN = new BrokerDisk(Double.NaN, -1, 0);
}
