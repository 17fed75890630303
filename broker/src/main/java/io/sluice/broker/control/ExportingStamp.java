package io.sluice.broker.control;

import io.sluice.broker.log.codecs.ExportingStateCode;
import io.sluice.protocol.codecs.ExportingState;

import java.util.Objects;

/**
 * A partition's exporting state with the version of the operation that set it; the latest version wins. Times are
 * epoch microseconds of the proposing broker's clock, carried in the entries, so every replica holds the same ones.
 *
 * @param sinceMicros     when the state began (a pause's pausedSince); 0 when unknown (before leases, or initial).
 * @param expiresAtMicros when a leased pause or soft pause ends by itself; 0 without a lease.
 * @param expiredAtMicros when a lease ended the hold at this version (the state is EXPORTING then); 0 when it did not.
 */
public record ExportingStamp(ExportingState state, long version, long sinceMicros, long expiresAtMicros, long expiredAtMicros)
{
    /** Before any operation reached the partition. */
    public static final ExportingStamp INITIAL = new ExportingStamp(ExportingState.EXPORTING, 0);

    public ExportingStamp
    {
        Objects.requireNonNull(state, "state");
        if (state != ExportingState.EXPORTING && state != ExportingState.PAUSED && state != ExportingState.SOFT_PAUSED)
        {
            throw new IllegalArgumentException("not an exporting state: " + state);
        }
        if (state == ExportingState.EXPORTING && expiresAtMicros != 0)
        {
            throw new IllegalArgumentException("exporting has no lease, was given one ending at " + expiresAtMicros);
        }
    }

    /** Without times: a stamp of before leases. */
    public ExportingStamp(final ExportingState state, final long version)
    {
        this(state, version, 0, 0, 0);
    }

    /** Whether exports are held (paused or soft-paused). */
    public boolean isHeld()
    {
        return state != ExportingState.EXPORTING;
    }

    /** Whether the hold has a lease that ran out at {@code nowMicros}. */
    public boolean leaseRanOut(final long nowMicros)
    {
        return isHeld() && expiresAtMicros > 0 && expiresAtMicros <= nowMicros;
    }

    /** The stamp after its lease ran out at {@code atMicros}: exporting, at the same version. */
    public ExportingStamp expired(final long atMicros)
    {
        return new ExportingStamp(ExportingState.EXPORTING, version, atMicros, 0, atMicros);
    }

    public static ExportingStateCode toCode(final ExportingState state)
    {
        return switch (state)
        {
            case PAUSED -> ExportingStateCode.PAUSED;
            case SOFT_PAUSED -> ExportingStateCode.SOFT_PAUSED;
            case EXPORTING -> ExportingStateCode.EXPORTING;
            default -> throw new IllegalArgumentException("not an exporting state: " + state);
        };
    }

    /** @throws IllegalArgumentException for a code this version does not know. */
    public static ExportingState toExportingState(final ExportingStateCode code)
    {
        return switch (code)
        {
            case PAUSED -> ExportingState.PAUSED;
            case SOFT_PAUSED -> ExportingState.SOFT_PAUSED;
            case EXPORTING -> ExportingState.EXPORTING;
            default -> throw new IllegalArgumentException("unknown exporting state code " + code);
        };
    }
}
