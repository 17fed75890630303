package io.sluice.protocol.message;

import java.time.Duration;

/**
 * Limits on management requests (backfills, exporting state versions) that the gateway checks on what operators
 * send and that a broker checks again on every request it takes, so that a peer talking to a broker port directly
 * (or a trusted peer that is wrong) cannot get what the gateway would have refused. Record limits are
 * {@link AppendLimits}.
 */
public final class AdminLimits
{
    /** Largest key of one record, in UTF-8 bytes: the append limit, so gateway and broker agree. */
    public static final int MAX_KEY_BYTES = AppendLimits.MAX_KEY_BYTES;

    /**
     * Largest payload of one record, in bytes: the gateway's {@code sluice.gateway.max-payload-bytes} may be
     * lower, never higher.
     */
    public static final int MAX_PAYLOAD_BYTES = 1024 * 1024;

    /** Most backfill tasks one partition's range may be split into (the gateway's {@code sluice.backfill.max-tasks}). */
    public static final int MAX_BACKFILL_TASKS = 64;

    /**
     * How far ahead of a broker's clock an exporting state version may be. Versions are wall-clock microseconds
     * of the gateway that sent them (see the gateway's version sequence); one far in the future would make every
     * later request look older, and pin the partition in its state.
     */
    public static final Duration MAX_VERSION_AHEAD = Duration.ofMinutes(10);

    private AdminLimits()
    {
    }

    /** The highest acceptable version at a clock reading of {@code epochMicros}: the reading plus the allowed skew. */
    public static long maxVersionAt(final long epochMicros)
    {
        final long ahead = MAX_VERSION_AHEAD.toNanos() / 1_000L;
        return epochMicros > Long.MAX_VALUE - ahead ? Long.MAX_VALUE : epochMicros + ahead;
    }
}
