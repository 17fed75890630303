package io.sluice.gateway.exporting;

import io.sluice.protocol.message.AdminLimits;

import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Versions of exporting operations: the latest version a replica holds wins, so each operation needs a
 * version above every earlier one, from this gateway, from its earlier runs and from other gateways.
 * Wall-clock microseconds order operations across gateways and restarts; {@code last + 1} keeps them
 * strictly increasing within this one even when the clock stands still or steps back; and a floor
 * observed from the brokers keeps them above what any replica already holds when clocks disagree.
 * <p>
 * Versions stay within what brokers accept (their clock plus {@link AdminLimits#MAX_VERSION_AHEAD}): a floor
 * beyond that did not come from a gateway (a broker refuses such versions today, but a replica may hold one from
 * before) and is ignored rather than followed, so the arithmetic never overflows and a forged version cannot drag
 * this sequence with it; the brokers holding it answer "a newer request won" instead of a false success.
 * Thread-safe.
 */
public final class ExportingVersionSequence
{
    private final Clock clock;
    private final AtomicLong last = new AtomicLong();

    public ExportingVersionSequence(final Clock clock)
    {
        this.clock = clock;
    }

    /** A version above every version returned before and above {@code observedFloor}. */
    public long next(final long observedFloor)
    {
        final long clockMicros = epochMicros(clock.instant());
        final long ceiling = AdminLimits.maxVersionAt(clockMicros);
        final long floor = observedFloor > ceiling ? 0 : observedFloor;
        return last.updateAndGet(previous -> Math.max(clockMicros, Math.min(Math.max(previous, floor), ceiling - 1) + 1));
    }

    private static long epochMicros(final Instant instant)
    {
        return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1_000L);
    }
}
