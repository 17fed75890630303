package io.sluice.broker.backfill;

import io.sluice.broker.log.codecs.BackfillAttemptFailedEntryDecoder;
import io.sluice.broker.log.codecs.BackfillAttemptFailedEntryEncoder;
import io.sluice.broker.log.codecs.BackfillAttemptStartedEntryDecoder;
import io.sluice.broker.log.codecs.BackfillAttemptStartedEntryEncoder;
import io.sluice.broker.log.codecs.BackfillCancelEntryDecoder;
import io.sluice.broker.log.codecs.BackfillCancelEntryEncoder;
import io.sluice.broker.log.codecs.BackfillCheckpointEntryDecoder;
import io.sluice.broker.log.codecs.BackfillCheckpointEntryEncoder;
import io.sluice.broker.log.codecs.BackfillRegisterEntryDecoder;
import io.sluice.broker.log.codecs.BackfillRegisterEntryEncoder;
import io.sluice.broker.log.codecs.BackfillTaskStateCode;
import io.sluice.broker.log.codecs.BackfillTasksDecoder;
import io.sluice.broker.log.codecs.BackfillTasksEncoder;
import io.sluice.broker.log.codecs.BooleanType;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;

/**
 * Backfill state as messages of the broker log schema ({@code broker-log-codecs.xml}), read and written only
 * through its generated codecs: the entries {@code BackfillRegisterEntry} .. {@code BackfillCancelEntry} (one
 * for each {@link BackfillEntry} type) and the snapshot's {@code BackfillTasks}. Every layout is versioned by its
 * message header.
 * <p>
 * Decoding checks every length against the bytes given and throws {@link BackfillCodecException} instead of
 * reading out of bounds. Stateless and thread-safe (backfill entries are rare: codecs are made per call).
 */
public final class BackfillMessages
{
    /** Longest string accepted when decoding, in bytes; ids and reasons are far shorter. */
    public static final int MAX_STRING_BYTES = 64 * 1024;

    private BackfillMessages()
    {
    }

    /** The whole log entry (message header and message) for proposing. */
    public static byte[] encode(final BackfillEntry entry)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(128);
        final MessageHeaderEncoder header = new MessageHeaderEncoder();
        final int length;
        if (entry instanceof BackfillEntry.Register r)
        {
            length = new BackfillRegisterEntryEncoder().wrapAndApplyHeader(buffer, 0, header)
                .timestampMs(r.timestampMs()).taskCount(r.taskCount()).firstTaskId(r.firstTaskId())
                .latestPosition(r.latestPosition()).backfillId(r.backfillId()).exporterId(r.exporterId())
                .encodedLength();
        }
        else if (entry instanceof BackfillEntry.AttemptStarted a)
        {
            length = new BackfillAttemptStartedEntryEncoder().wrapAndApplyHeader(buffer, 0, header)
                .timestampMs(a.timestampMs()).taskId(a.taskId()).backfillId(a.backfillId()).encodedLength();
        }
        else if (entry instanceof BackfillEntry.Checkpoint c)
        {
            length = new BackfillCheckpointEntryEncoder().wrapAndApplyHeader(buffer, 0, header)
                .timestampMs(c.timestampMs()).taskId(c.taskId()).exportedUpTo(c.exportedUpTo())
                .backfillId(c.backfillId()).encodedLength();
        }
        else if (entry instanceof BackfillEntry.AttemptFailed f)
        {
            length = new BackfillAttemptFailedEntryEncoder().wrapAndApplyHeader(buffer, 0, header)
                .timestampMs(f.timestampMs()).taskId(f.taskId()).giveUp(f.giveUp() ? BooleanType.TRUE : BooleanType.FALSE)
                .backfillId(f.backfillId()).reason(f.reason()).encodedLength();
        }
        else if (entry instanceof BackfillEntry.Cancel c)
        {
            length = new BackfillCancelEntryEncoder().wrapAndApplyHeader(buffer, 0, header)
                .timestampMs(c.timestampMs()).backfillId(c.backfillId()).encodedLength();
        }
        else
        {
            throw new IllegalArgumentException("not a backfill entry type: " + entry);
        }
        return Arrays.copyOf(buffer.byteArray(), MessageHeaderEncoder.ENCODED_LENGTH + length);
    }

    /** Decodes a whole backfill log entry (message header and message). */
    public static BackfillEntry decodeEntry(final DirectBuffer buffer, final int offset, final int length)
    {
        final UnsafeBuffer entry = view(buffer, offset, length);
        final MessageHeaderDecoder header = header(entry, "backfill entry");
        final int templateId = header.templateId();
        final int body = header.encodedLength();
        final int blockLength = header.blockLength();
        final int version = header.version();
        try
        {
            final BackfillEntry decoded;
            final int limit;
            switch (templateId)
            {
                case BackfillRegisterEntryDecoder.TEMPLATE_ID ->
                {
                    final BackfillRegisterEntryDecoder d = new BackfillRegisterEntryDecoder()
                        .wrap(entry, body, block(blockLength, BackfillRegisterEntryDecoder.BLOCK_LENGTH), version);
                    final long timestampMs = d.timestampMs();
                    final int taskCount = d.taskCount();
                    final int firstTaskId = d.firstTaskId();
                    final long latestPosition = d.latestPosition();
                    checkText(d.backfillIdLength());
                    final String backfillId = d.backfillId();
                    checkText(d.exporterIdLength());
                    final String exporterId = d.exporterId();
                    decoded = new BackfillEntry.Register(backfillId, exporterId, taskCount, firstTaskId, timestampMs,
                        latestPosition);
                    limit = d.limit();
                }
                case BackfillAttemptStartedEntryDecoder.TEMPLATE_ID ->
                {
                    final BackfillAttemptStartedEntryDecoder d = new BackfillAttemptStartedEntryDecoder()
                        .wrap(entry, body, block(blockLength, BackfillAttemptStartedEntryDecoder.BLOCK_LENGTH), version);
                    final long timestampMs = d.timestampMs();
                    final int taskId = d.taskId();
                    checkText(d.backfillIdLength());
                    final String backfillId = d.backfillId();
                    decoded = new BackfillEntry.AttemptStarted(backfillId, taskId, timestampMs);
                    limit = d.limit();
                }
                case BackfillCheckpointEntryDecoder.TEMPLATE_ID ->
                {
                    final BackfillCheckpointEntryDecoder d = new BackfillCheckpointEntryDecoder()
                        .wrap(entry, body, block(blockLength, BackfillCheckpointEntryDecoder.BLOCK_LENGTH), version);
                    final long timestampMs = d.timestampMs();
                    final int taskId = d.taskId();
                    final long exportedUpTo = d.exportedUpTo();
                    checkText(d.backfillIdLength());
                    final String backfillId = d.backfillId();
                    decoded = new BackfillEntry.Checkpoint(backfillId, taskId, exportedUpTo, timestampMs);
                    limit = d.limit();
                }
                case BackfillAttemptFailedEntryDecoder.TEMPLATE_ID ->
                {
                    final BackfillAttemptFailedEntryDecoder d = new BackfillAttemptFailedEntryDecoder()
                        .wrap(entry, body, block(blockLength, BackfillAttemptFailedEntryDecoder.BLOCK_LENGTH), version);
                    final long timestampMs = d.timestampMs();
                    final int taskId = d.taskId();
                    final BooleanType giveUp = d.giveUp();
                    if (giveUp != BooleanType.TRUE && giveUp != BooleanType.FALSE)
                    {
                        throw new BackfillCodecException("backfill attempt failed entry: giveUp code " + d.giveUpRaw());
                    }
                    checkText(d.backfillIdLength());
                    final String backfillId = d.backfillId();
                    checkText(d.reasonLength());
                    final String reason = d.reason();
                    decoded = new BackfillEntry.AttemptFailed(backfillId, taskId, reason, giveUp == BooleanType.TRUE,
                        timestampMs);
                    limit = d.limit();
                }
                case BackfillCancelEntryDecoder.TEMPLATE_ID ->
                {
                    final BackfillCancelEntryDecoder d = new BackfillCancelEntryDecoder()
                        .wrap(entry, body, block(blockLength, BackfillCancelEntryDecoder.BLOCK_LENGTH), version);
                    final long timestampMs = d.timestampMs();
                    checkText(d.backfillIdLength());
                    final String backfillId = d.backfillId();
                    decoded = new BackfillEntry.Cancel(backfillId, timestampMs);
                    limit = d.limit();
                }
                default -> throw new BackfillCodecException("not a backfill entry: template " + templateId);
            }
            expectEnd(limit, length, version, "backfill entry");
            return decoded;
        }
        catch (final IndexOutOfBoundsException e)
        {
            throw truncated("backfill entry", length, e);
        }
    }

    /** Encodes the tasks as a {@code BackfillTasks} message (with its header) at {@code offset}; returns the length. */
    public static int encodeTasks(final Collection<BackfillTask> tasks, final MutableDirectBuffer buffer, final int offset)
    {
        final BackfillTasksEncoder encoder = new BackfillTasksEncoder()
            .wrapAndApplyHeader(buffer, offset, new MessageHeaderEncoder());
        final BackfillTasksEncoder.TasksEncoder encoded = encoder.tasksCount(tasks.size());
        for (final BackfillTask t : tasks)
        {
            encoded.next().taskId(t.taskId()).fromPosition(t.fromPosition()).toPosition(t.toPosition())
                .exportedUpTo(t.exportedUpTo()).attempts(t.attempts())
                .state(BackfillTaskStateCode.get((short)t.state().code()))
                .createdAtMs(t.createdAtMs()).updatedAtMs(t.updatedAtMs())
                .backfillId(t.backfillId()).exporterId(t.exporterId()).failureReason(t.failureReason());
        }
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    /** The tasks as a {@code BackfillTasks} message in a fresh array. */
    public static byte[] encodeTasks(final Collection<BackfillTask> tasks)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64 + 96 * tasks.size());
        return Arrays.copyOf(buffer.byteArray(), encodeTasks(tasks, buffer, 0));
    }

    /** Decodes a {@code BackfillTasks} message (with its header); no bytes at all are no tasks. */
    public static List<BackfillTask> decodeTasks(final DirectBuffer buffer, final int offset, final int length)
    {
        final UnsafeBuffer bytes = view(buffer, offset, length);
        if (length == 0)
        {
            return List.of();
        }
        final MessageHeaderDecoder header = header(bytes, "backfill tasks");
        if (header.templateId() != BackfillTasksDecoder.TEMPLATE_ID)
        {
            throw new BackfillCodecException("backfill tasks: template " + header.templateId());
        }
        try
        {
            final BackfillTasksDecoder decoder = new BackfillTasksDecoder().wrap(bytes, header.encodedLength(),
                block(header.blockLength(), BackfillTasksDecoder.BLOCK_LENGTH), header.version());
            final BackfillTasksDecoder.TasksDecoder tasks = decoder.tasks();
            if (tasks.count() < 0 || tasks.count() > length)
            {
                throw new BackfillCodecException("backfill tasks: " + tasks.count() + " tasks in " + length + " bytes");
            }
            final List<BackfillTask> decoded = new ArrayList<>(tasks.count());
            int i = 0;
            for (final BackfillTasksDecoder.TasksDecoder t : tasks)
            {
                final int taskId = t.taskId();
                final long from = t.fromPosition();
                final long to = t.toPosition();
                final long exportedUpTo = t.exportedUpTo();
                final int attempts = t.attempts();
                final short stateCode = t.stateRaw();
                final long createdAtMs = t.createdAtMs();
                final long updatedAtMs = t.updatedAtMs();
                checkText(t.backfillIdLength());
                final String backfillId = t.backfillId();
                checkText(t.exporterIdLength());
                final String exporterId = t.exporterId();
                checkText(t.failureReasonLength());
                final String failureReason = t.failureReason();
                decoded.add(new BackfillTask(backfillId, exporterId, taskId, from, to, exportedUpTo, attempts,
                    state(stateCode, "backfill tasks: task " + i), failureReason, createdAtMs, updatedAtMs));
                i++;
            }
            expectEnd(decoder.limit(), length, header.version(), "backfill tasks");
            return decoded;
        }
        catch (final IndexOutOfBoundsException e)
        {
            throw truncated("backfill tasks", length, e);
        }
    }

    static BackfillTaskState state(final int code, final String what)
    {
        try
        {
            return BackfillTaskState.fromCode(code);
        }
        catch (final IllegalArgumentException e)
        {
            throw new BackfillCodecException(what + ": " + e.getMessage());
        }
    }

    /** The bytes as a buffer of their own, so every read past them fails (Agrona checks bounds). */
    private static UnsafeBuffer view(final DirectBuffer buffer, final int offset, final int length)
    {
        if (offset < 0 || length < 0 || (long)offset + length > buffer.capacity())
        {
            throw new BackfillCodecException(
                "offset " + offset + " length " + length + " outside a buffer of " + buffer.capacity());
        }
        return new UnsafeBuffer(buffer, offset, length);
    }

    private static MessageHeaderDecoder header(final UnsafeBuffer bytes, final String what)
    {
        if (bytes.capacity() < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            throw new BackfillCodecException(what + " truncated: " + bytes.capacity() + " bytes, no message header");
        }
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(bytes, 0);
        if (header.schemaId() != MessageHeaderDecoder.SCHEMA_ID)
        {
            throw new BackfillCodecException(what + " of schema " + header.schemaId());
        }
        return header;
    }

    /** A block shorter than the fields known here cannot be read (these messages have all had them from the start). */
    private static int block(final int blockLength, final int known)
    {
        if (blockLength < known)
        {
            throw new BackfillCodecException("truncated: a block of " + blockLength + " bytes, " + known + " expected");
        }
        return blockLength;
    }

    /** Checks a string's length before it is read, so a corrupt one is refused instead of allocated. */
    static void checkText(final int length)
    {
        if (length < 0 || length > MAX_STRING_BYTES)
        {
            throw new BackfillCodecException("string length " + length + " out of range");
        }
    }

    /** A message of a version known here ends where its last field does; a newer one may carry more. */
    private static void expectEnd(final int limit, final int length, final int version, final String what)
    {
        if (version <= MessageHeaderDecoder.SCHEMA_VERSION && limit != length)
        {
            throw new BackfillCodecException(what + ": " + (length - limit) + " unexpected trailing bytes");
        }
    }

    private static BackfillCodecException truncated(final String what, final int length, final IndexOutOfBoundsException e)
    {
        final BackfillCodecException error = new BackfillCodecException(what + " truncated: " + length + " bytes");
        error.initCause(e);
        return error;
    }
}
