package io.sluice.broker.append;

import io.sluice.broker.log.codecs.IdempotencyScope;
import io.sluice.broker.log.codecs.IdempotencySnapshotDecoder;
import io.sluice.broker.log.codecs.IdempotencySnapshotDecoder.ScopesDecoder;
import io.sluice.broker.log.codecs.IdempotencySnapshotDecoder.ScopesDecoder.IdsDecoder;
import io.sluice.broker.log.codecs.IdempotencySnapshotEncoder;
import io.sluice.broker.log.codecs.IdempotencySnapshotEncoder.ScopesEncoder;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The append ids a partition remembers (issue 14), in its replicated state: clients' {@code Idempotency-Key}s and
 * the gateway's own retry ids, each scope in its own bounded {@link IdempotencyTable} so the gateway's many
 * short-lived ids never push a client's key out early.
 * <p>
 * Time is the partition's replicated clock: the highest leader timestamp of any applied idempotent append entry.
 * It only moves forward (a new leader with a slower clock cannot bring an expired id back) and is the same on
 * every replica, so expiry never depends on a replica's own wall clock.
 * <p>
 * In a snapshot: an {@code IdempotencySnapshot} message with its header (broker-log-codecs.xml), the clock and one
 * scope a table. Not thread-safe: the state machine's apply thread only.
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

    public AppendIdempotency(final int maxClientKeys, final int maxGatewayIds)
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

    /** Bytes {@link #write} takes. */
    public int snapshotLength()
    {
        return MessageHeaderEncoder.ENCODED_LENGTH + IdempotencySnapshotEncoder.BLOCK_LENGTH + ScopesEncoder.sbeHeaderSize() +
            clientKeys.snapshotLength() + gatewayIds.snapshotLength();
    }

    /** Writes the {@code IdempotencySnapshot} message, with its header, at {@code offset}; returns its length. */
    public int write(final MutableDirectBuffer buffer, final int offset)
    {
        final IdempotencySnapshotEncoder encoder = new IdempotencySnapshotEncoder()
            .wrapAndApplyHeader(buffer, offset, new MessageHeaderEncoder())
            .clockMs(clockMs);
        final ScopesEncoder scopes = encoder.scopesCount(2);
        clientKeys.write(scopes.next().scope(IdempotencyScope.CLIENT));
        gatewayIds.write(scopes.next().scope(IdempotencyScope.GATEWAY));
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    /**
     * Replaces the content with a snapshot written by {@link #write}.
     *
     * @throws IllegalArgumentException when the bytes are not such a message, or are cut short.
     */
    public void read(final DirectBuffer buffer, final int offset, final int length)
    {
        clear();
        if (length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            throw new IllegalArgumentException("idempotency snapshot of " + length + " bytes has no message header");
        }
        // A view of exactly the given bytes: a count or length that lies reads past it and fails, not beyond.
        final UnsafeBuffer bytes = new UnsafeBuffer(buffer, offset, length);
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(bytes, 0);
        if (header.schemaId() != IdempotencySnapshotDecoder.SCHEMA_ID ||
            header.templateId() != IdempotencySnapshotDecoder.TEMPLATE_ID ||
            header.blockLength() < IdempotencySnapshotDecoder.BLOCK_LENGTH)
        {
            throw new IllegalArgumentException("not an idempotency snapshot: schema " + header.schemaId() + ", template " +
                header.templateId() + ", block " + header.blockLength());
        }
        try
        {
            final IdempotencySnapshotDecoder decoder = new IdempotencySnapshotDecoder()
                .wrap(bytes, header.encodedLength(), header.blockLength(), header.version());
            final long clock = decoder.clockMs();
            for (final ScopesDecoder scope : decoder.scopes())
            {
                final IdempotencyTable table = table(scope.scope());
                if (table == null)
                {
                    throw new IllegalArgumentException("idempotency snapshot holds ids of scope " + scope.scope());
                }
                final IdsDecoder ids = scope.ids();
                if ((long)ids.count() * IdsDecoder.sbeBlockLength() > length)
                {
                    throw new IllegalArgumentException("idempotency snapshot claims " + ids.count() + " ids in " +
                        length + " bytes");
                }
                table.read(ids);
            }
            clockMs = clock;
        }
        catch (final IndexOutOfBoundsException e)
        {
            clear();
            throw new IllegalArgumentException("idempotency snapshot truncated: " + length + " bytes", e);
        }
        catch (final IllegalArgumentException e)
        {
            clear(); // a scope read before the refusal goes too
            throw e;
        }
    }
}
