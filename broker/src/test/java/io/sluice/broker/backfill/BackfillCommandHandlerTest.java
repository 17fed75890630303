package io.sluice.broker.backfill;

import io.sluice.protocol.codecs.BackfillRequestEncoder;
import io.sluice.protocol.codecs.BackfillState;
import io.sluice.protocol.codecs.BackfillStatusRequestEncoder;
import io.sluice.protocol.codecs.BackfillStatusResponseDecoder;
import io.sluice.protocol.codecs.CancelBackfillRequestEncoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.transport.MessageWriter;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The leader's backfill API over encoded requests and answers; "replication" applies to the registry at
 * once, the registration taking the exporter's position and the last position from a scripted partition,
 * and moving the exporter's position in the same apply, as the state machine must.
 */
@Timeout(10)
class BackfillCommandHandlerTest
{
    private static final int PARTITION = 2;

    private final BackfillRegistry registry = new BackfillRegistry();
    private final Map<String, Long> exporterPositions = new ConcurrentHashMap<>(Map.of("file", 118L));
    private final long lastPosition = 240;
    private final AtomicBoolean paused = new AtomicBoolean();
    private final AtomicReference<RuntimeException> replicationFailure = new AtomicReference<>();
    private final List<BackfillEntry> proposed = new ArrayList<>();
    private final BackfillCommandHandler handler = new BackfillCommandHandler(1, PARTITION, registry, Set.of("file"),
        () -> lastPosition, this::apply, paused::get, Clock.fixed(Instant.ofEpochMilli(5_000), ZoneOffset.UTC));

    private CompletableFuture<?> apply(final BackfillEntry entry)
    {
        proposed.add(entry);
        if (replicationFailure.get() != null)
        {
            return CompletableFuture.failedFuture(replicationFailure.get());
        }
        if (entry instanceof BackfillEntry.Register register)
        {
            final BackfillRegistry.Registration registration =
                registry.register(register, exporterPositions.get(register.exporterId()), register.latestPosition());
            if (registration.outcome() == BackfillApplyOutcome.APPLIED)
            {
                exporterPositions.merge(register.exporterId(), registration.newExporterPosition(), Math::max);
            }
        }
        else
        {
            registry.apply(entry);
        }
        return CompletableFuture.completedFuture(null);
    }

    @Test
    void aBackfillRequestResetsTheExporterAndAnswersTheRegisteredTasks()
    {
        final List<String> tasks = tasks(send(start("bf-1", "file", 2, 7)));

        assertThat(tasks).containsExactly(
            "7 PENDING 119..179 upTo 118 attempts 0 bf-1 file ''",
            "8 PENDING 180..240 upTo 179 attempts 0 bf-1 file ''");
        assertThat(exporterPositions.get("file")).isEqualTo(240);
        assertThat(registry.compactionFloor()).isEqualTo(119);
        assertThat(proposed).singleElement().isInstanceOfSatisfying(BackfillEntry.Register.class,
            register -> assertThat(register.latestPosition()).as("the leader's last position, in the entry").isEqualTo(240));
    }

    @Test
    void badRegistrationsAreRefusedWithoutProposingAnything()
    {
        assertThat(error(send(start("bf-1", "kafka", 1, 1)))).startsWith("EXPORTER_NOT_FOUND")
            .contains("unknown exporter 'kafka'");
        assertThat(error(send(start("bf-1", "file", 0, 1)))).startsWith("INVALID_ARGUMENT").contains("with 0");
        assertThat(error(send(start("", "file", 1, 1)))).startsWith("INVALID_ARGUMENT");
        send(start("bf-1", "file", 1, 1));
        assertThat(error(send(start("bf-2", "file", 1, 1)))).startsWith("CONFLICT")
            .contains("exporter file has an unfinished backfill bf-1");

        assertThat(proposed).hasSize(1);
        assertThat(exporterPositions.get("file")).isEqualTo(240);
    }

    @Test
    void aFailedReplicationAnswersUnavailableAndChangesNothing()
    {
        replicationFailure.set(new IllegalStateException("not leader any more"));

        assertThat(error(send(start("bf-1", "file", 1, 1)))).startsWith("UNAVAILABLE").contains("not leader any more");
        assertThat(registry.tasks()).isEmpty();
        assertThat(exporterPositions.get("file")).isEqualTo(118);
    }

    @Test
    void statusReportsUnfinishedTasksPendingWhilePaused()
    {
        send(start("bf-1", "file", 1, 1));
        registry.apply(new BackfillEntry.AttemptStarted("bf-1", 1, 6_000));

        assertThat(tasks(send(status("")))).singleElement().asString().startsWith("1 RUNNING");
        paused.set(true);
        assertThat(tasks(send(status("bf-1")))).singleElement().asString().startsWith("1 PENDING");
        assertThat(tasks(send(status("other")))).isEmpty();
    }

    @Test
    void cancelEndsTheUnfinishedTasksAndAnUnknownIdChangesNothing()
    {
        send(start("bf-1", "file", 2, 1));

        assertThat(tasks(send(cancel("bf-1")))).allSatisfy(t -> assertThat(t).contains("CANCELLED"));
        assertThat(tasks(send(cancel("nope")))).isEmpty();
        assertThat(proposed).hasSize(2);
    }

    @Test
    void garbageAndWrongPartitionsAreRefused()
    {
        assertThat(error(send(MessageWriter.of(new UnsafeBuffer(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9}), 0, 9))))
            .startsWith("MALFORMED_REQUEST");
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer();
        final MessageWriter valid = start("bf-1", "file", 1, 1);
        valid.write(buffer, 0);
        assertThat(error(send(MessageWriter.of(buffer, 0, valid.encodedLength() - 3)))).startsWith("MALFORMED_REQUEST");
        buffer.putInt(MessageHeaderEncoder.ENCODED_LENGTH + BackfillRequestEncoder.BLOCK_LENGTH, 1 << 30,
            java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThat(error(send(MessageWriter.of(buffer, 0, valid.encodedLength())))).startsWith("MALFORMED_REQUEST");

        final ExpandableArrayBuffer other = new ExpandableArrayBuffer();
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + new BackfillStatusRequestEncoder()
            .wrapAndApplyHeader(other, 0, new MessageHeaderEncoder()).partitionId(9).backfillId("").encodedLength();
        assertThat(error(send(MessageWriter.of(other, 0, length)))).startsWith("PARTITION_NOT_FOUND");
        assertThat(proposed).isEmpty();
    }

    // ------------------------------------------------------------------------------------------- helpers

    private UnsafeBuffer send(final MessageWriter request)
    {
        final ExpandableArrayBuffer in = new ExpandableArrayBuffer();
        request.write(in, 0);
        final AtomicReference<UnsafeBuffer> answer = new AtomicReference<>();
        handler.onRequest(in, 0, request.encodedLength(), writer ->
        {
            final ExpandableArrayBuffer out = new ExpandableArrayBuffer();
            writer.write(out, 0);
            assertThat(answer.getAndSet(new UnsafeBuffer(out, 0, writer.encodedLength()))).as("one answer").isNull();
        });
        assertThat(answer.get()).as("answered").isNotNull();
        return answer.get();
    }

    private static List<String> tasks(final UnsafeBuffer answer)
    {
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(answer, 0);
        assertThat(header.templateId()).as(error(answer)).isEqualTo(BackfillStatusResponseDecoder.TEMPLATE_ID);
        final BackfillStatusResponseDecoder decoder = new BackfillStatusResponseDecoder()
            .wrap(answer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        assertThat(decoder.partitionId()).isEqualTo(PARTITION);
        final List<String> tasks = new ArrayList<>();
        for (final BackfillStatusResponseDecoder.TasksDecoder t : decoder.tasks())
        {
            final BackfillState state = t.state();
            tasks.add(t.taskId() + " " + state + " " + t.fromPosition() + ".." + t.toPosition() + " upTo " +
                t.exportedUpTo() + " attempts " + t.attempts() + " " + t.backfillId() + " " + t.exporterId() + " '" +
                t.failureReason() + "'");
        }
        return tasks;
    }

    private static String error(final UnsafeBuffer answer)
    {
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(answer, 0);
        if (header.templateId() != ErrorResponseDecoder.TEMPLATE_ID)
        {
            return "not an error (template " + header.templateId() + ")";
        }
        final ErrorResponseDecoder error = new ErrorResponseDecoder()
            .wrap(answer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        final ErrorCode code = error.code();
        return code + " " + error.message();
    }

    private static MessageWriter start(final String backfillId, final String exporterId, final int taskCount,
        final int firstTaskId)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer();
        final BackfillRequestEncoder encoder = new BackfillRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .partitionId(PARTITION).taskCount(taskCount).firstTaskId(firstTaskId)
            .backfillId(backfillId).exporterId(exporterId);
        return MessageWriter.of(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private static MessageWriter status(final String backfillId)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer();
        final BackfillStatusRequestEncoder encoder = new BackfillStatusRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder()).partitionId(PARTITION).backfillId(backfillId);
        return MessageWriter.of(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private static MessageWriter cancel(final String backfillId)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer();
        final CancelBackfillRequestEncoder encoder = new CancelBackfillRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder()).partitionId(PARTITION).backfillId(backfillId);
        return MessageWriter.of(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }
}
