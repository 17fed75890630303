package io.sluice.protocol.cluster;

/**
 * The times of a partition's exporting state as the control group holds them (issue 27), in epoch microseconds of the
 * proposing broker's clock; 0 when unknown or not set.
 *
 * @param sinceMicros     when the state began (for a pause: pausedSince).
 * @param expiresAtMicros when a leased pause or soft pause ends by itself; 0 without a lease.
 * @param expiredAtMicros when a lease ended the hold (the state is EXPORTING then); 0 when none did.
 */
public record ExportingHold(long sinceMicros, long expiresAtMicros, long expiredAtMicros)
{
    /** Nothing known: no lease, no times. */
    public static final ExportingHold NONE = new ExportingHold(0, 0, 0);

    /** A wire value that is absent (an older sender's null value, negative) reads as 0. */
    public static ExportingHold of(final long sinceMicros, final long expiresAtMicros, final long expiredAtMicros)
    {
        return new ExportingHold(Math.max(0, sinceMicros), Math.max(0, expiresAtMicros), Math.max(0, expiredAtMicros));
    }
}
