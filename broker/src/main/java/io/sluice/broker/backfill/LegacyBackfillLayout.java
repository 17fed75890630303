package io.sluice.broker.backfill;

import io.sluice.broker.log.codecs.BackfillEntryDecoder;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import org.agrona.DirectBuffer;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads, never writes, backfill state as it was stored before the broker log schema's version 3 made it SBE
 * messages ({@link BackfillMessages}): the payload of a {@code BackfillEntry} (template 24) log entry, and the
 * blob in a partition snapshot's {@code backfills} field (snapshot versions 1 and 2). Little-endian; a string is an
 * int32 byte length and UTF-8 bytes; a boolean a u8:
 * <pre>
 * entry:    u8 version (1 or 2) | u8 type | the type's {@link BackfillEntry} record components, in order
 * snapshot: u8 version=1 | int32 taskCount | taskCount x task
 * task:     string backfillId | string exporterId | int32 taskId | int64 fromPosition | int64 toPosition |
 *           int64 exportedUpTo | int32 attempts | u8 stateCode | string failureReason |
 *           int64 createdAtMs | int64 updatedAtMs
 * </pre>
 * A version 1 {@code Register} may end before {@code latestPosition} (added at the end): it then reads
 * {@link BackfillEntry.Register#LATEST_AT_APPLY}. Version 2 entries hold every field.
 * <p>
 * <b>When to delete:</b> once no broker can start from data written before schema version 3, that is when the
 * oldest release a supported upgrade starts from writes version 3. Until then a replica may replay entries from
 * before the upgrade (its Raft log keeps them until a snapshot lets it purge them) or load, or be sent, a snapshot
 * taken before it. Delete this class with template 24's case in {@link BackfillMessages#decodeEntry} and
 * {@code PartitionState.apply}, and the reading of the snapshot's {@code backfills} field in
 * {@code PartitionSnapshot.decode}; keep template 24 and that field in the schema, marked retired.
 */
public final class LegacyBackfillLayout
{
    private static final int ENTRY_VERSION_BEFORE_LATEST_POSITION = 1;
    private static final int ENTRY_VERSION = 2;
    private static final int SNAPSHOT_VERSION = 1;

    private LegacyBackfillLayout()
    {
    }

    /** Decodes a template 24 entry, {@code entry} being exactly its bytes and {@code header} wrapped on them. */
    static BackfillEntry decodeEntry(final DirectBuffer entry, final MessageHeaderDecoder header)
    {
        final int length = entry.capacity();
        final BackfillEntryDecoder decoder;
        final int payloadLength;
        try
        {
            decoder = new BackfillEntryDecoder().wrap(entry, header.encodedLength(), header.blockLength(), header.version());
            payloadLength = decoder.payloadLength();
        }
        catch (final IndexOutOfBoundsException e)
        {
            throw new BackfillCodecException("backfill entry truncated: " + length + " bytes");
        }
        final Reader r = new Reader(entry, decoder.limit() + BackfillEntryDecoder.payloadHeaderLength(), payloadLength);
        final int version = r.version(ENTRY_VERSION_BEFORE_LATEST_POSITION, ENTRY_VERSION);
        final int type = r.u8();
        final BackfillEntry decoded = switch (type)
        {
            case BackfillEntry.Register.TYPE -> new BackfillEntry.Register(r.string(), r.string(), r.i32(), r.i32(),
                r.i64(), version > ENTRY_VERSION_BEFORE_LATEST_POSITION || r.remaining() >= Long.BYTES ? r.i64() :
                BackfillEntry.Register.LATEST_AT_APPLY);
            case BackfillEntry.AttemptStarted.TYPE -> new BackfillEntry.AttemptStarted(r.string(), r.i32(), r.i64());
            case BackfillEntry.Checkpoint.TYPE -> new BackfillEntry.Checkpoint(r.string(), r.i32(), r.i64(), r.i64());
            case BackfillEntry.AttemptFailed.TYPE ->
                new BackfillEntry.AttemptFailed(r.string(), r.i32(), r.string(), r.u8() != 0, r.i64());
            case BackfillEntry.Cancel.TYPE -> new BackfillEntry.Cancel(r.string(), r.i64());
            default -> throw new BackfillCodecException("unknown backfill entry type " + type);
        };
        r.expectEnd("backfill entry");
        return decoded;
    }

    /** Decodes the tasks of a snapshot's {@code backfills} field (snapshot versions 1 and 2). */
    public static List<BackfillTask> decodeSnapshot(final DirectBuffer buffer, final int offset, final int length)
    {
        final Reader r = new Reader(buffer, offset, length);
        r.version(SNAPSHOT_VERSION, SNAPSHOT_VERSION);
        final int count = r.i32();
        if (count < 0 || count > length)
        {
            throw new BackfillCodecException("backfill snapshot claims " + count + " tasks in " + length + " bytes");
        }
        final List<BackfillTask> tasks = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            final String backfillId = r.string();
            final String exporterId = r.string();
            final int taskId = r.i32();
            final long from = r.i64();
            final long to = r.i64();
            final long exportedUpTo = r.i64();
            final int attempts = r.i32();
            final BackfillTaskState state = BackfillMessages.state(r.u8(), "backfill snapshot task " + i);
            tasks.add(new BackfillTask(backfillId, exporterId, taskId, from, to, exportedUpTo, attempts, state,
                r.string(), r.i64(), r.i64()));
        }
        r.expectEnd("backfill snapshot");
        return tasks;
    }

    private static final class Reader
    {
        private final DirectBuffer buffer;
        private final int end;
        private int position;

        Reader(final DirectBuffer buffer, final int offset, final int length)
        {
            if (offset < 0 || length < 0 || (long)offset + length > buffer.capacity())
            {
                throw new BackfillCodecException(
                    "offset " + offset + " length " + length + " outside a buffer of " + buffer.capacity());
            }
            this.buffer = buffer;
            this.position = offset;
            this.end = offset + length;
        }

        int remaining()
        {
            return end - position;
        }

        int version(final int oldest, final int newest)
        {
            final int version = u8();
            if (version < oldest || version > newest)
            {
                throw new BackfillCodecException("unsupported backfill encoding version " + version);
            }
            return version;
        }

        private void need(final int bytes)
        {
            if (end - position < bytes)
            {
                throw new BackfillCodecException(
                    "truncated: needs " + bytes + " more bytes at offset " + position + ", has " + (end - position));
            }
        }

        int u8()
        {
            need(1);
            return buffer.getByte(position++) & 0xFF;
        }

        int i32()
        {
            need(Integer.BYTES);
            final int value = buffer.getInt(position, ByteOrder.LITTLE_ENDIAN);
            position += Integer.BYTES;
            return value;
        }

        long i64()
        {
            need(Long.BYTES);
            final long value = buffer.getLong(position, ByteOrder.LITTLE_ENDIAN);
            position += Long.BYTES;
            return value;
        }

        String string()
        {
            final int length = i32();
            BackfillMessages.checkText(length);
            need(length);
            final String value = buffer.getStringWithoutLengthUtf8(position, length);
            position += length;
            return value;
        }

        void expectEnd(final String what)
        {
            if (position != end)
            {
                throw new BackfillCodecException(what + ": " + (end - position) + " unexpected trailing bytes");
            }
        }
    }
}
