package io.sluice.broker;

import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.FileExporter;
import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimOutcome;
import io.sluice.protocol.codecs.BackfillClaimPhase;
import io.sluice.protocol.codecs.BackfillClaimRequestEncoder;
import io.sluice.protocol.codecs.BackfillClaimResponseDecoder;
import io.sluice.protocol.codecs.BackfillClaimsRequestEncoder;
import io.sluice.protocol.codecs.BackfillClaimsResponseDecoder;
import io.sluice.protocol.codecs.BackfillRequestEncoder;
import io.sluice.protocol.codecs.BackfillStatusResponseDecoder;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.transport.MessageWriter;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Backfill claims (issue 15) through the command API of 3 real brokers: any broker commits a claim and answers once its
 * replica applied it, only the control group's leader answers the read, and a partition leader registers a claimed
 * backfill only while the claim is that backfill's and being started.
 */
class BrokerBackfillClaimsIT
{
    static final int PARTITION = 1;
    /** Claims are the cluster's, one an exporter: each test claims for an exporter of its own on the shared cluster. */
    private static final String EXPORTER = "file";
    private static final String REGISTERING = "registering";
    private static final String EMPTY = "emptied";

    @TempDir
    static Path dataDir;

    /** One cluster for the class: no test stops a broker. */
    @AutoClose
    static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception
    {
        cluster = TestCluster.startShared(dataDir, 3, 1, 3, (c) -> c.withExporters(Map.of(
            EXPORTER, new ExporterConfig(EXPORTER, FileExporter.TYPE, Map.of()),
            REGISTERING, new ExporterConfig(REGISTERING, FileExporter.TYPE, Map.of()),
            EMPTY, new ExporterConfig(EMPTY, FileExporter.TYPE, Map.of()))));
    }

    @Test
    @Timeout(120)
    void anyBrokerCommitsAClaimAndTheSecondOfTwoThatSawNoneIsAConflictNamingTheFirst() throws Exception
    {
        final int controlLeader = awaitControlLeader();
        final int other = (controlLeader + 1) % 3;
        final int third = (controlLeader + 2) % 3;

        final Claim first = claim(other, BackfillClaimAction.CLAIM, "bf-1", BackfillClaimPhase.NONE, "", false);
        assertThat(first.outcome).isEqualTo(BackfillClaimOutcome.CLAIMED);
        assertThat(first.claimIndex).isPositive();
        assertThat(first.heldBackfillId).isEqualTo("bf-1");
        assertThat(first.heldPhase).isEqualTo(BackfillClaimPhase.STARTING);
        assertThat(cluster.brokers[other].control().state().backfillClaims().claim(EXPORTER).backfillId())
            .as("answered once the answering broker's replica applied it").isEqualTo("bf-1");

        final Claim second = claim(third, BackfillClaimAction.CLAIM, "bf-2", BackfillClaimPhase.NONE, "", false);
        assertThat(second.outcome).isEqualTo(BackfillClaimOutcome.CONFLICT);
        assertThat(second.heldBackfillId).isEqualTo("bf-1");
        assertThat(second.reason).contains("backfill bf-1 took the claim of exporter 'file'");

        final ErrorResponseDecoder notLeader = TestCluster.error(cluster.send(other, claimsRequest()));
        assertThat(notLeader.code()).isEqualTo(ErrorCode.NOT_LEADER);
        assertThat(notLeader.leaderId()).isEqualTo(controlLeader);
        final List<String> held = claimsRead(controlLeader, EXPORTER);
        assertThat(held).containsExactly(EXPORTER + "=bf-1:STARTING");

        final ErrorResponseDecoder noSuchExporter = TestCluster.error(cluster.send(other,
            claimRequest(BackfillClaimAction.CLAIM, "kafka", "bf-3", BackfillClaimPhase.NONE, "", false)));
        assertThat(noSuchExporter.code()).isEqualTo(ErrorCode.EXPORTER_NOT_FOUND);
        assertThat(noSuchExporter.message()).contains("unknown exporter 'kafka'");

        assertThat(claim(third, BackfillClaimAction.STARTED, "bf-2", BackfillClaimPhase.NONE, "", false).outcome)
            .isEqualTo(BackfillClaimOutcome.NOT_HELD);
        assertThat(claim(third, BackfillClaimAction.STARTED, "bf-1", BackfillClaimPhase.NONE, "", false).outcome)
            .isEqualTo(BackfillClaimOutcome.STARTED);
        assertThat(claimsRead(controlLeader, EXPORTER)).containsExactly(EXPORTER + "=bf-1:STARTED");
    }

    @Test
    @Timeout(120)
    void aLeaderRegistersAClaimedBackfillOnlyWhileTheClaimIsItsOwnAndBeingStarted() throws Exception
    {
        awaitControlLeader();
        final int leader = cluster.awaitLeader(PARTITION);
        cluster.appendRecords(PARTITION, 20, 5, "before");
        // The claim through a broker other than the partition's leader: the leader waits until it applied it.
        final Claim claimed = claim(REGISTERING, (leader + 1) % 3, BackfillClaimAction.CLAIM, "bf-1",
            BackfillClaimPhase.NONE, "", false);
        assertThat(claimed.outcome).isEqualTo(BackfillClaimOutcome.CLAIMED);

        final ErrorResponseDecoder notItsClaim =
            TestCluster.error(cluster.send(leader, backfillRequest(REGISTERING, "bf-other", claimed.claimIndex)));
        assertThat(notItsClaim.code()).isEqualTo(ErrorCode.CONFLICT);
        assertThat(notItsClaim.message()).contains("backfill bf-other does not hold the claim of exporter '" + REGISTERING + "'");
        final ErrorResponseDecoder withoutClaim =
            TestCluster.error(cluster.send(leader, backfillRequest(REGISTERING, "bf-loose", NO_CLAIM)));
        assertThat(withoutClaim.code()).as("a start without a claim while bf-1 is being started").isEqualTo(ErrorCode.CONFLICT);
        assertThat(withoutClaim.message()).contains("is being started");
        assertThat(cluster.brokers[leader].partition(PARTITION).backfills().registry().tasks()).isEmpty();

        assertThat(taskCount(cluster.send(leader, backfillRequest(REGISTERING, "bf-1", claimed.claimIndex)))).isEqualTo(2);

        assertThat(claim(REGISTERING, leader, BackfillClaimAction.STARTED, "bf-1", BackfillClaimPhase.NONE, "", false)
            .outcome).isEqualTo(BackfillClaimOutcome.STARTED);
        final ErrorResponseDecoder afterStarted =
            TestCluster.error(cluster.send(leader, backfillRequest(REGISTERING, "bf-1", claimed.claimIndex)));
        assertThat(afterStarted.code()).isEqualTo(ErrorCode.CONFLICT);
        assertThat(afterStarted.message()).contains("is started already");
        assertThat(cluster.brokers[leader].partition(PARTITION).backfills().registry().tasks())
            .extracting((t) -> t.backfillId()).containsOnly("bf-1");
    }

    @Test
    @Timeout(120)
    void anEmptyBackfillIsRecordedOnEveryReplicaAndReadByTheLeader() throws Exception
    {
        final int controlLeader = awaitControlLeader();

        final Claim empty = claim(EMPTY, (controlLeader + 2) % 3, BackfillClaimAction.CLAIM, "bf-empty",
            BackfillClaimPhase.NONE, "", true);

        assertThat(empty.outcome).isEqualTo(BackfillClaimOutcome.CLAIMED);
        assertThat(empty.heldPhase).isEqualTo(BackfillClaimPhase.STARTED);
        assertThat(emptyBackfillsRead(controlLeader)).containsExactly("bf-empty@" + EMPTY);
        for (int b = 0; b < 3; b++)
        {
            final int broker = b;
            await("empty backfill on broker " + b).atMost(Duration.ofSeconds(10)).until(() ->
                cluster.brokers[broker].control().state().backfillClaims().emptyBackfills().size() == 1);
        }
    }

    // ---------------------------------------------------------------------------------------------- helpers

    private int awaitControlLeader()
    {
        final int[] leader = {-1};
        await("control group leader, every replica caught up").atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(50)).until(() ->
            {
                for (int b = 0; b < 3; b++)
                {
                    if (!cluster.brokers[b].control().caughtUp())
                    {
                        return false;
                    }
                    if (cluster.brokers[b].control().isLeader())
                    {
                        leader[0] = b;
                    }
                }
                return leader[0] >= 0;
            });
        return leader[0];
    }

    private record Claim(BackfillClaimOutcome outcome, long claimIndex, BackfillClaimPhase heldPhase, String heldBackfillId,
        String reason)
    {
    }

    private Claim claim(final int brokerId, final BackfillClaimAction action, final String backfillId,
        final BackfillClaimPhase expectedPhase, final String expectedBackfillId, final boolean empty)
    {
        return claim(EXPORTER, brokerId, action, backfillId, expectedPhase, expectedBackfillId, empty);
    }

    private Claim claim(final String exporterId, final int brokerId, final BackfillClaimAction action,
        final String backfillId, final BackfillClaimPhase expectedPhase, final String expectedBackfillId, final boolean empty)
    {
        final DirectBuffer response = cluster.send(brokerId,
            claimRequest(action, exporterId, backfillId, expectedPhase, expectedBackfillId, empty));
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(response, 0);
        if (header.templateId() != BackfillClaimResponseDecoder.TEMPLATE_ID)
        {
            final ErrorResponseDecoder error = TestCluster.error(response);
            throw new AssertionError("expected a claim answer, got " + error.code() + " " + error.message());
        }
        final BackfillClaimResponseDecoder decoder = new BackfillClaimResponseDecoder()
            .wrap(response, header.encodedLength(), header.blockLength(), header.version());
        return new Claim(decoder.outcome(), decoder.claimIndex(), decoder.heldPhase(), decoder.heldBackfillId(),
            decoder.reason());
    }

    static MessageWriter claimRequest(final BackfillClaimAction action, final String exporterId, final String backfillId,
        final BackfillClaimPhase expectedPhase, final String expectedBackfillId, final boolean empty)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(128);
        final BackfillClaimRequestEncoder encoder = new BackfillClaimRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .action(action)
            .expectedPhase(expectedPhase)
            .empty(empty ? BooleanType.TRUE : BooleanType.FALSE)
            .exporterId(exporterId)
            .backfillId(backfillId)
            .expectedBackfillId(expectedBackfillId);
        return TestCluster.bytes(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private static MessageWriter claimsRequest()
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(32);
        final BackfillClaimsRequestEncoder encoder = new BackfillClaimsRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .brokerId(BackfillClaimsRequestEncoder.brokerIdNullValue());
        return TestCluster.bytes(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private BackfillClaimsResponseDecoder claimsAnswer(final int brokerId)
    {
        final DirectBuffer response = cluster.send(brokerId, claimsRequest());
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(response, 0);
        if (header.templateId() != BackfillClaimsResponseDecoder.TEMPLATE_ID)
        {
            final ErrorResponseDecoder error = TestCluster.error(response);
            throw new AssertionError("expected the claims, got " + error.code() + " " + error.message());
        }
        return new BackfillClaimsResponseDecoder().wrap(response, header.encodedLength(), header.blockLength(),
            header.version());
    }

    /** "exporter=backfill:PHASE" for every claim of the exporter the broker answers (others are other tests'). */
    private List<String> claimsRead(final int brokerId, final String ofExporter)
    {
        final List<String> claims = new ArrayList<>();
        for (final BackfillClaimsResponseDecoder.ClaimsDecoder claim : claimsAnswer(brokerId).claims())
        {
            final BackfillClaimPhase phase = claim.phase();
            final String exporterId = claim.exporterId();
            final String backfillId = claim.backfillId();
            if (exporterId.equals(ofExporter))
            {
                claims.add(exporterId + "=" + backfillId + ":" + phase);
            }
        }
        return claims;
    }

    /** "backfill@exporter" for every empty backfill the broker answers. */
    private List<String> emptyBackfillsRead(final int brokerId)
    {
        final BackfillClaimsResponseDecoder answer = claimsAnswer(brokerId);
        for (final BackfillClaimsResponseDecoder.ClaimsDecoder claim : answer.claims())
        {
            claim.skipExporterId();
            claim.skipBackfillId();
        }
        final List<String> empties = new ArrayList<>();
        for (final BackfillClaimsResponseDecoder.EmptyBackfillsDecoder empty : answer.emptyBackfills())
        {
            final String backfillId = empty.backfillId();
            empties.add(backfillId + "@" + empty.exporterId());
        }
        return empties;
    }

    /** A backfill request that names no claim. */
    static final long NO_CLAIM = Long.MIN_VALUE;

    static MessageWriter backfillRequest(final String backfillId, final long claimIndex)
    {
        return backfillRequest(EXPORTER, backfillId, claimIndex);
    }

    private static MessageWriter backfillRequest(final String exporterId, final String backfillId, final long claimIndex)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);
        final BackfillRequestEncoder encoder = new BackfillRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .partitionId(PARTITION)
            .taskCount(2)
            .firstTaskId(0)
            .claimIndex(claimIndex == NO_CLAIM ? BackfillRequestEncoder.claimIndexNullValue() : claimIndex)
            .backfillId(backfillId)
            .exporterId(exporterId);
        return TestCluster.bytes(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private static int taskCount(final DirectBuffer response)
    {
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(response, 0);
        if (header.templateId() != BackfillStatusResponseDecoder.TEMPLATE_ID)
        {
            final ErrorResponseDecoder error = TestCluster.error(response);
            throw new AssertionError("expected backfill tasks, got " + error.code() + " " + error.message());
        }
        return new BackfillStatusResponseDecoder().wrap(response, header.encodedLength(), header.blockLength(),
            header.version()).tasks().count();
    }
}
