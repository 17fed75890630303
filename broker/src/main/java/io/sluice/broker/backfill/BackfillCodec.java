package io.sluice.broker.backfill;

import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Binary layouts of backfill log entries and snapshots. Little-endian; strings are an int32 byte length and
 * UTF-8 bytes. Decoding checks every length against the bytes given and throws
 * {@link BackfillCodecException} instead of reading out of bounds.
 * <pre>
 * entry:    u8 version=2 | u8 type | fields of the type, in record-component order
 *           (int32, int64, string; boolean as u8)
 * snapshot: u8 version=1 | int32 taskCount | taskCount x task
 * task:     string backfillId | string exporterId | int32 taskId | int64 fromPosition | int64 toPosition |
 *           int64 exportedUpTo | int32 attempts | u8 stateCode | string failureReason |
 *           int64 createdAtMs | int64 updatedAtMs
 * </pre>
 * Entries carry their layout's version: version 2 entries always hold every field of their type. Version 1
 * entries, written before, are still read: their {@code Register} may end before {@code latestPosition}, which
 * was added at the end, so for them (only) that field is taken when the bytes hold it.
 * <p>
 * Stateless and thread-safe.
 */
public final class BackfillCodec
{
    /** The entry layout written now. */
    public static final int ENTRY_VERSION = 2;
    /** Entries of this version (and only these) may lack a Register's latest position. */
    static final int ENTRY_VERSION_BEFORE_LATEST_POSITION = 1;
    public static final int SNAPSHOT_VERSION = 1;
    /** Longest string accepted when decoding, in bytes; ids and reasons are far shorter. */
    public static final int MAX_STRING_BYTES = 64 * 1024;

    private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    private BackfillCodec()
    {
    }

    /** Encodes the entry at {@code offset}, growing an expandable buffer as needed; returns the length written. */
    public static int encode(final BackfillEntry entry, final MutableDirectBuffer buffer, final int offset)
    {
        final Writer w = new Writer(buffer, offset);
        w.u8(ENTRY_VERSION);
        w.u8(entry.typeCode());
        if (entry instanceof BackfillEntry.Register r)
        {
            w.string(r.backfillId()).string(r.exporterId()).i32(r.taskCount()).i32(r.firstTaskId())
                .i64(r.timestampMs()).i64(r.latestPosition());
        }
        else if (entry instanceof BackfillEntry.AttemptStarted a)
        {
            w.string(a.backfillId()).i32(a.taskId()).i64(a.timestampMs());
        }
        else if (entry instanceof BackfillEntry.Checkpoint c)
        {
            w.string(c.backfillId()).i32(c.taskId()).i64(c.exportedUpTo()).i64(c.timestampMs());
        }
        else if (entry instanceof BackfillEntry.AttemptFailed f)
        {
            w.string(f.backfillId()).i32(f.taskId()).string(f.reason()).u8(f.giveUp() ? 1 : 0).i64(f.timestampMs());
        }
        else if (entry instanceof BackfillEntry.Cancel c)
        {
            w.string(c.backfillId()).i64(c.timestampMs());
        }
        return w.position - offset;
    }

    /** A fresh byte array holding the encoded entry, for proposing it as a log entry payload. */
    public static byte[] encode(final BackfillEntry entry)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(128);
        final int length = encode(entry, buffer, 0);
        final byte[] bytes = new byte[length];
        buffer.getBytes(0, bytes);
        return bytes;
    }

    public static BackfillEntry decodeEntry(final DirectBuffer buffer, final int offset, final int length)
    {
        final Reader r = new Reader(buffer, offset, length);
        final int version = r.version(ENTRY_VERSION_BEFORE_LATEST_POSITION, ENTRY_VERSION);
        final int type = r.u8();
        final BackfillEntry entry = switch (type)
        {
            // A version 1 Register written without latestPosition reads LATEST_AT_APPLY.
            case BackfillEntry.Register.TYPE -> new BackfillEntry.Register(r.string(), r.string(), r.i32(), r.i32(),
                r.i64(), version > ENTRY_VERSION_BEFORE_LATEST_POSITION || r.remaining() >= Long.BYTES ? r.i64() :
                BackfillEntry.Register.LATEST_AT_APPLY);
            case BackfillEntry.AttemptStarted.TYPE -> new BackfillEntry.AttemptStarted(r.string(), r.i32(), r.i64());
            case BackfillEntry.Checkpoint.TYPE ->
                new BackfillEntry.Checkpoint(r.string(), r.i32(), r.i64(), r.i64());
            case BackfillEntry.AttemptFailed.TYPE ->
                new BackfillEntry.AttemptFailed(r.string(), r.i32(), r.string(), r.u8() != 0, r.i64());
            case BackfillEntry.Cancel.TYPE -> new BackfillEntry.Cancel(r.string(), r.i64());
            default -> throw new BackfillCodecException("unknown backfill entry type " + type);
        };
        r.expectEnd("backfill entry");
        return entry;
    }

    public static BackfillEntry decodeEntry(final byte[] bytes)
    {
        return decodeEntry(new org.agrona.concurrent.UnsafeBuffer(bytes), 0, bytes.length);
    }

    public static int encodeSnapshot(
        final Collection<BackfillTask> tasks, final MutableDirectBuffer buffer, final int offset)
    {
        final Writer w = new Writer(buffer, offset);
        w.u8(SNAPSHOT_VERSION);
        w.i32(tasks.size());
        for (final BackfillTask t : tasks)
        {
            w.string(t.backfillId()).string(t.exporterId()).i32(t.taskId()).i64(t.fromPosition())
                .i64(t.toPosition()).i64(t.exportedUpTo()).i32(t.attempts()).u8(t.state().code())
                .string(t.failureReason()).i64(t.createdAtMs()).i64(t.updatedAtMs());
        }
        return w.position - offset;
    }

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
            final int stateCode = r.u8();
            final BackfillTaskState state;
            try
            {
                state = BackfillTaskState.fromCode(stateCode);
            }
            catch (final IllegalArgumentException e)
            {
                throw new BackfillCodecException("backfill snapshot task " + i + ": " + e.getMessage());
            }
            tasks.add(new BackfillTask(backfillId, exporterId, taskId, from, to, exportedUpTo, attempts, state,
                r.string(), r.i64(), r.i64()));
        }
        r.expectEnd("backfill snapshot");
        return tasks;
    }

    private static final class Writer
    {
        private final MutableDirectBuffer buffer;
        private int position;

        Writer(final MutableDirectBuffer buffer, final int offset)
        {
            this.buffer = buffer;
            this.position = offset;
        }

        Writer u8(final int value)
        {
            buffer.putByte(position, (byte)value);
            position += 1;
            return this;
        }

        Writer i32(final int value)
        {
            buffer.putInt(position, value, ORDER);
            position += Integer.BYTES;
            return this;
        }

        Writer i64(final long value)
        {
            buffer.putLong(position, value, ORDER);
            position += Long.BYTES;
            return this;
        }

        Writer string(final String value)
        {
            final byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
            i32(bytes.length);
            buffer.putBytes(position, bytes);
            position += bytes.length;
            return this;
        }
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

        /** Reads the version byte; one outside {@code oldest..newest} is refused. */
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
            final int value = buffer.getInt(position, ORDER);
            position += Integer.BYTES;
            return value;
        }

        long i64()
        {
            need(Long.BYTES);
            final long value = buffer.getLong(position, ORDER);
            position += Long.BYTES;
            return value;
        }

        String string()
        {
            final int length = i32();
            if (length < 0 || length > MAX_STRING_BYTES)
            {
                throw new BackfillCodecException("string length " + length + " out of range at offset " + position);
            }
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
