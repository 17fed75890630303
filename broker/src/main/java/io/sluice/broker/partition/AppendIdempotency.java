package io.sluice.broker.partition;

import io.sluice.broker.log.codecs.IdempotencyScope;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteOrder;

/**
 * The append ids a partition remembers (issue 14), in its replicated state: clients' {@code Idempotency-Key}s and
 * the gateway's own retry ids, each scope in its own bounded {@link IdempotencyTable} so the gateway's many
 * short-lived ids never push a client's key out early.
 * <p>
 * Time is the partition's replicated clock: the highest leader timestamp of any applied idempotent append entry.
 * It only moves forward (a new leader with a slower clock cannot bring an expired id back) and is the same on
 * every replica, so expiry never depends on a replica's own wall clock.
 * <p>
 * Snapshot layout (little-endian): int64 clock, the client table, the gateway table ({@link IdempotencyTable}).
 * Not thread-safe: the state machine's apply thread only.
 */
public final class AppendIdempotency
{
    /** Client keys one partition remembers at most; about 76 MB of heap at the bound. */
    public static final int MAX_CLIENT_KEYS = 1 << 20;
    /** Gateway retry ids one partition remembers at most (they live for seconds). */
    public static final int MAX_GATEWAY_IDS = 1 << 18;

    private final IdempotencyTable clientKeys;
    private final IdempotencyTable gatewayIds;
    private long clockMs;

    public AppendIdempotency()
    {
        this(MAX_CLIENT_KEYS, MAX_GATEWAY_IDS);
    }

    AppendIdempotency(final int maxClientKeys, final int maxGatewayIds)
    {
        this.clientKeys = new IdempotencyTable(maxClientKeys);
        this.gatewayIds = new IdempotencyTable(maxGatewayIds);
    }

    /** Moves the replicated clock to an applied entry's leader timestamp (never back) and forgets what expired. */
    public void advanceClock(final long entryTimestampMs)
    {
        if (entryTimestampMs > clockMs)
        {
            clockMs = entryTimestampMs;
        }
        clientKeys.expire(clockMs);
        gatewayIds.expire(clockMs);
    }

    public long clockMs()
    {
        return clockMs;
    }

    /** The table of a scope, or null for {@link IdempotencyScope#NONE} and unknown scopes. */
    IdempotencyTable table(final IdempotencyScope scope)
    {
        return switch (scope)
        {
            case CLIENT -> clientKeys;
            case GATEWAY -> gatewayIds;
            default -> null;
        };
    }

    public int clientKeyCount()
    {
        return clientKeys.size();
    }

    public int gatewayIdCount()
    {
        return gatewayIds.size();
    }

    public long allocatedBytes()
    {
        return clientKeys.allocatedBytes() + gatewayIds.allocatedBytes();
    }

    public void clear()
    {
        clockMs = 0;
        clientKeys.clear();
        gatewayIds.clear();
    }

    public int snapshotLength()
    {
        return Long.BYTES + clientKeys.snapshotLength() + gatewayIds.snapshotLength();
    }

    public int write(final MutableDirectBuffer buffer, final int offset)
    {
        buffer.putLong(offset, clockMs, ByteOrder.LITTLE_ENDIAN);
        int cursor = offset + Long.BYTES;
        cursor += clientKeys.write(buffer, cursor);
        cursor += gatewayIds.write(buffer, cursor);
        return cursor - offset;
    }

    public void read(final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < Long.BYTES)
        {
            throw new IllegalArgumentException("idempotency snapshot of " + length + " bytes has no clock");
        }
        clockMs = buffer.getLong(offset, ByteOrder.LITTLE_ENDIAN);
        int cursor = offset + Long.BYTES;
        cursor += clientKeys.read(buffer, cursor, offset + length - cursor);
        gatewayIds.read(buffer, cursor, offset + length - cursor);
    }
}
