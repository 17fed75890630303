package io.sluice.broker.backfill;

import io.sluice.protocol.codecs.BackfillState;
import io.sluice.protocol.codecs.BackfillStatusResponseDecoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.transport.ResponseChannel;
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
 * The leader's backfill API over decoded requests and encoded answers; "replication" applies to the registry at
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
        final List<String> tasks = tasks(start("bf-1", "file", 2, 7));

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
        assertThat(error(start("bf-1", "kafka", 1, 1))).startsWith("EXPORTER_NOT_FOUND")
            .contains("unknown exporter 'kafka'");
        assertThat(error(start("bf-1", "file", 0, 1))).startsWith("INVALID_ARGUMENT").contains("with 0");
        assertThat(error(start("", "file", 1, 1))).startsWith("INVALID_ARGUMENT");
        start("bf-1", "file", 1, 1);
        assertThat(error(start("bf-2", "file", 1, 1))).startsWith("CONFLICT")
            .contains("exporter file has an unfinished backfill bf-1");

        assertThat(proposed).hasSize(1);
        assertThat(exporterPositions.get("file")).isEqualTo(240);
    }

    @Test
    void aFailedReplicationAnswersUnavailableAndChangesNothing()
    {
        replicationFailure.set(new IllegalStateException("not leader any more"));

        assertThat(error(start("bf-1", "file", 1, 1))).startsWith("UNAVAILABLE").contains("not leader any more");
        assertThat(registry.tasks()).isEmpty();
        assertThat(exporterPositions.get("file")).isEqualTo(118);
    }

    @Test
    void statusReportsUnfinishedTasksPendingWhilePaused()
    {
        start("bf-1", "file", 1, 1);
        registry.apply(new BackfillEntry.AttemptStarted("bf-1", 1, 6_000));

        assertThat(tasks(status(""))).singleElement().asString().startsWith("1 RUNNING");
        paused.set(true);
        assertThat(tasks(status("bf-1"))).singleElement().asString().startsWith("1 PENDING");
        assertThat(tasks(status("other"))).isEmpty();
    }

    @Test
    void cancelEndsTheUnfinishedTasksAndAnUnknownIdChangesNothing()
    {
        start("bf-1", "file", 2, 1);

        assertThat(tasks(cancel("bf-1"))).allSatisfy(t -> assertThat(t).contains("CANCELLED"));
        assertThat(tasks(cancel("nope"))).isEmpty();
        assertThat(proposed).hasSize(2);
    }

    @Test
    void aRequestForAnotherPartitionIsRefused()
    {
        assertThat(error(answer((response) -> handler.onStatus(9, "", response)))).startsWith("PARTITION_NOT_FOUND");
        assertThat(error(answer((response) -> handler.onStart(9, "bf-1", "file", 1, 1, response))))
            .startsWith("PARTITION_NOT_FOUND");
        assertThat(proposed).isEmpty();
    }

    // ------------------------------------------------------------------------------------------- helpers

    /** What the handler answered to one call: exactly one answer. */
    private static UnsafeBuffer answer(final java.util.function.Consumer<ResponseChannel> call)
    {
        final AtomicReference<UnsafeBuffer> answer = new AtomicReference<>();
        call.accept(writer ->
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

    private UnsafeBuffer start(final String backfillId, final String exporterId, final int taskCount,
        final int firstTaskId)
    {
        return answer((response) -> handler.onStart(PARTITION, backfillId, exporterId, taskCount, firstTaskId, response));
    }

    private UnsafeBuffer status(final String backfillId)
    {
        return answer((response) -> handler.onStatus(PARTITION, backfillId, response));
    }

    private UnsafeBuffer cancel(final String backfillId)
    {
        return answer((response) -> handler.onCancel(PARTITION, backfillId, response));
    }
}
