package io.sluice.gateway.backfill;

import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.gateway.broker.MalformedResponseException;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimOutcome;
import io.sluice.protocol.codecs.BackfillClaimPhase;
import io.sluice.protocol.codecs.BackfillClaimRequestDecoder;
import io.sluice.protocol.codecs.BackfillClaimResponseEncoder;
import io.sluice.protocol.codecs.BackfillClaimsRequestDecoder;
import io.sluice.protocol.codecs.BackfillClaimsResponseEncoder;
import io.sluice.protocol.codecs.BackfillRequestDecoder;
import io.sluice.protocol.codecs.BackfillState;
import io.sluice.protocol.codecs.BackfillStatusRequestDecoder;
import io.sluice.protocol.codecs.BackfillStatusResponseEncoder;
import io.sluice.protocol.codecs.CancelBackfillRequestDecoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.message.ErrorResponseWriter;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.RequestTimeoutException;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import io.sluice.protocol.transport.TransportServer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The SBE backfill client against a scripted broker on a real socket. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SbeBackfillClientTest
{
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final Queue<String> received = new ConcurrentLinkedQueue<>();
    private volatile Function<String, MessageWriter> answer = this::tasksAnswer;
    private TransportServer server;
    private TransportClient transport;
    private SbeBackfillClient client;

    @BeforeEach
    void start()
    {
        server = TransportServer.start(new InetSocketAddress("127.0.0.1", 0), (buffer, offset, length, response) ->
        {
            final String request = describe(new UnsafeBuffer(buffer, offset, length));
            received.add(request);
            final MessageWriter writer = answer.apply(request);
            if (writer != null)
            {
                response.respond(writer);
            }
        }, TransportConfig.defaults());
        transport = new TransportClient(TransportConfig.defaults());
        client = new SbeBackfillClient(transport,
            PartitionDistribution.of("127.0.0.1:" + server.localAddress().getPort(), 2, 1));
    }

    @AfterEach
    void stop() throws Exception
    {
        transport.close();
        server.close();
    }

    @Test
    void aBackfillRequestCarriesEveryFieldAndTheAnswerDecodesToTasks()
    {
        final List<BackfillTaskStatus> tasks = client.start(0, 2, "bf-1", "file", 2, 5, 42, TIMEOUT).join();

        assertThat(received).containsExactly(
            "start partition=2 taskCount=2 firstTaskId=5 claimIndex=42 backfill=bf-1 exporter=file");
        assertThat(tasks).containsExactly(
            new BackfillTaskStatus(2, "bf-1", "file", 5, BackfillState.RUNNING, 119, 179, 150, 1, 1_000, 2_000, null),
            new BackfillTaskStatus(2, "bf-1", "file", 6, BackfillState.FAILED, 180, 240, 179, 3, 1_000, 3_000, "sink gone"));
    }

    @Test
    void statusAndCancelRequestsNameTheBackfill()
    {
        client.status(0, 1, "", TIMEOUT).join();
        client.cancel(0, 1, "bf-2", TIMEOUT).join();

        assertThat(received).containsExactly("status partition=1 backfill=", "cancel partition=1 backfill=bf-2");
    }

    @Test
    void anErrorResponseFailsWithTheBrokersCodeAndMessage()
    {
        answer = request -> ErrorResponseWriter.of(ErrorCode.NOT_LEADER, 2, 1, "partition 2 on broker 0: not leader (leader is 1)");

        assertThatThrownBy(() -> client.start(0, 2, "bf-1", "file", 1, 1, 7, TIMEOUT).join()).cause()
            .isInstanceOfSatisfying(BrokerErrorException.class, e ->
            {
                assertThat(e.code()).isEqualTo(ErrorCode.NOT_LEADER);
                assertThat(e.leaderId()).isEqualTo(1);
                assertThat(e.getMessage()).contains("not leader (leader is 1)");
            });
    }

    @Test
    void garbageAndTruncatedAnswersFailAsMalformed()
    {
        answer = request -> MessageWriter.of(new UnsafeBuffer(new byte[] {1, 2, 3}), 0, 3);
        assertThatThrownBy(() -> client.status(0, 1, "", TIMEOUT).join()).cause()
            .isInstanceOf(MalformedResponseException.class).hasMessageContaining("answer of 3 bytes is shorter than a header");

        final ExpandableArrayBuffer full = new ExpandableArrayBuffer();
        final int length = encodeTasks(full, 1);
        answer = request -> MessageWriter.of(full, 0, length - 6);
        assertThatThrownBy(() -> client.status(0, 1, "", TIMEOUT).join()).cause()
            .isInstanceOf(MalformedResponseException.class).hasMessageContaining("partition 1 on broker 0");

        answer = request -> MessageWriter.of(full, 0, length);
        assertThatThrownBy(() -> client.status(0, 2, "", TIMEOUT).join()).cause()
            .isInstanceOf(MalformedResponseException.class).hasMessageContaining("answer is for partition 1");
    }

    @Test
    void aClaimRequestCarriesEveryFieldAndItsAnswerDecodes()
    {
        answer = request -> claimAnswer(BackfillClaimOutcome.CONFLICT, "bf-0", "backfill bf-0 holds the claim");

        final ClaimAnswer claimed = client.claim(0, ClaimRequest.claim("file", "bf-1",
            new ControlBackfills.Claim("file", "bf-0", BackfillClaimPhase.STARTED, 10, 0, 3), false), TIMEOUT).join();

        assertThat(received).containsExactly(
            "claim CLAIM expected=STARTED empty=FALSE exporter=file backfill=bf-1 expectedBackfill=bf-0");
        assertThat(claimed).isEqualTo(new ClaimAnswer(BackfillClaimOutcome.CONFLICT, 12, BackfillClaimPhase.STARTING,
            "bf-0", 1_000, "backfill bf-0 holds the claim"));
        client.claim(0, ClaimRequest.of(BackfillClaimAction.RELEASE, "file", "bf-1"), TIMEOUT).join();
        assertThat(received).last().isEqualTo("claim RELEASE expected=NONE empty=FALSE exporter=file backfill=bf-1 " +
            "expectedBackfill=");
    }

    @Test
    void theClaimsAnswerDecodesEveryClaimAndEmptyBackfill()
    {
        answer = request -> claimsAnswer();

        final ControlBackfills read = client.claims(0, TIMEOUT).join();

        assertThat(received).containsExactly("claims broker=0");
        assertThat(read).isEqualTo(new ControlBackfills(5_000,
            List.of(new ControlBackfills.Claim("file", "bf-1", BackfillClaimPhase.STARTING, 1_000, 61_000, 9)),
            List.of(new ControlBackfills.Empty("bf-e", "search", 2_000))));
    }

    @Test
    void truncatedOrUnknownClaimAnswersFailAsMalformed()
    {
        final MessageWriter whole = claimsAnswer();
        final ExpandableArrayBuffer bytes = new ExpandableArrayBuffer();
        whole.write(bytes, 0);
        for (final int cut : new int[] {3, 7, 11, 20})
        {
            answer = request -> MessageWriter.of(bytes, 0, whole.encodedLength() - cut);
            assertThatThrownBy(() -> client.claims(0, TIMEOUT).join()).as("cut by %d", cut).cause()
                .isInstanceOf(MalformedResponseException.class).hasMessageContaining("broker 0: backfill claims");
        }
        final MessageWriter claim = claimAnswer(BackfillClaimOutcome.CLAIMED, "bf-1", "ok");
        final ExpandableArrayBuffer claimBytes = new ExpandableArrayBuffer();
        claim.write(claimBytes, 0);
        claimBytes.putByte(MessageHeaderEncoder.ENCODED_LENGTH + BackfillClaimResponseEncoder.outcomeEncodingOffset(), (byte)9);
        answer = request -> MessageWriter.of(claimBytes, 0, claim.encodedLength());
        assertThatThrownBy(() -> client.claim(0, ClaimRequest.of(BackfillClaimAction.STARTED, "file", "bf-1"), TIMEOUT)
            .join()).cause().isInstanceOf(MalformedResponseException.class).hasMessageContaining("unknown claim outcome 9");
        answer = request -> ErrorResponseWriter.of(ErrorCode.NOT_LEADER, 0, 2, "not the control group's leader");
        assertThatThrownBy(() -> client.claims(0, TIMEOUT).join()).cause()
            .isInstanceOfSatisfying(BrokerErrorException.class, e -> assertThat(e.leaderId()).isEqualTo(2));
    }

    private static MessageWriter claimAnswer(final BackfillClaimOutcome outcome, final String held, final String reason)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer();
        final BackfillClaimResponseEncoder encoder = new BackfillClaimResponseEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .outcome(outcome).claimIndex(12).heldPhase(BackfillClaimPhase.STARTING).heldClaimedAtMs(1_000)
            .heldBackfillId(held).reason(reason);
        return MessageWriter.of(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private static MessageWriter claimsAnswer()
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer();
        final BackfillClaimsResponseEncoder encoder = new BackfillClaimsResponseEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .nowMs(5_000).appliedIndex(20);
        encoder.claimsCount(1).next().phase(BackfillClaimPhase.STARTING).claimedAtMs(1_000).releasableAtMs(61_000)
            .claimIndex(9).exporterId("file").backfillId("bf-1");
        encoder.emptyBackfillsCount(1).next().createdAtMs(2_000).backfillId("bf-e").exporterId("search");
        return MessageWriter.of(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    @Test
    void noAnswerFailsAtTheDeadlineAndUnknownPairsFailFast()
    {
        answer = request -> null;
        assertThatThrownBy(() -> client.status(0, 1, "", Duration.ofMillis(300)).join()).cause()
            .isInstanceOf(RequestTimeoutException.class);

        assertThatThrownBy(() -> client.status(3, 1, "", TIMEOUT).join()).cause()
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partition 1 on broker 3");
    }

    private MessageWriter tasksAnswer(final String request)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer();
        final int partitionId = Integer.parseInt(request.replaceAll(".*partition=(\\d+).*", "$1"));
        final int length = encodeTasks(buffer, partitionId);
        return MessageWriter.of(buffer, 0, length);
    }

    private static int encodeTasks(final ExpandableArrayBuffer buffer, final int partitionId)
    {
        final BackfillStatusResponseEncoder encoder = new BackfillStatusResponseEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .partitionId(partitionId);
        final BackfillStatusResponseEncoder.TasksEncoder tasks = encoder.tasksCount(2);
        tasks.next().taskId(5).state(BackfillState.RUNNING).fromPosition(119).toPosition(179).exportedUpTo(150)
            .attempts(1).createdAtMs(1_000).updatedAtMs(2_000).backfillId("bf-1").exporterId("file").failureReason("");
        tasks.next().taskId(6).state(BackfillState.FAILED).fromPosition(180).toPosition(240).exportedUpTo(179)
            .attempts(3).createdAtMs(1_000).updatedAtMs(3_000).backfillId("bf-1").exporterId("file")
            .failureReason("sink gone");
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    private static String describe(final UnsafeBuffer buffer)
    {
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
        final int offset = MessageHeaderDecoder.ENCODED_LENGTH;
        switch (header.templateId())
        {
            case BackfillRequestDecoder.TEMPLATE_ID ->
            {
                final BackfillRequestDecoder d = new BackfillRequestDecoder()
                    .wrap(buffer, offset, header.blockLength(), header.version());
                return "start partition=" + d.partitionId() + " taskCount=" + d.taskCount() + " firstTaskId=" +
                    d.firstTaskId() + " claimIndex=" + d.claimIndex() + " backfill=" + d.backfillId() + " exporter=" +
                    d.exporterId();
            }
            case BackfillClaimRequestDecoder.TEMPLATE_ID ->
            {
                final BackfillClaimRequestDecoder d = new BackfillClaimRequestDecoder()
                    .wrap(buffer, offset, header.blockLength(), header.version());
                return "claim " + d.action() + " expected=" + d.expectedPhase() + " empty=" + d.empty() + " exporter=" +
                    d.exporterId() + " backfill=" + d.backfillId() + " expectedBackfill=" + d.expectedBackfillId();
            }
            case BackfillClaimsRequestDecoder.TEMPLATE_ID ->
            {
                return "claims broker=" + new BackfillClaimsRequestDecoder()
                    .wrap(buffer, offset, header.blockLength(), header.version()).brokerId();
            }
            case BackfillStatusRequestDecoder.TEMPLATE_ID ->
            {
                final BackfillStatusRequestDecoder d = new BackfillStatusRequestDecoder()
                    .wrap(buffer, offset, header.blockLength(), header.version());
                return "status partition=" + d.partitionId() + " backfill=" + d.backfillId();
            }
            case CancelBackfillRequestDecoder.TEMPLATE_ID ->
            {
                final CancelBackfillRequestDecoder d = new CancelBackfillRequestDecoder()
                    .wrap(buffer, offset, header.blockLength(), header.version());
                return "cancel partition=" + d.partitionId() + " backfill=" + d.backfillId();
            }
            default ->
            {
                return "template " + header.templateId();
            }
        }
    }
}
