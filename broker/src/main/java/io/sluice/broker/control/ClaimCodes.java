package io.sluice.broker.control;

import io.sluice.broker.log.codecs.BackfillClaimActionCode;
import io.sluice.broker.log.codecs.BackfillClaimEntryDecoder;
import io.sluice.broker.log.codecs.BackfillClaimEntryEncoder;
import io.sluice.broker.log.codecs.BackfillClaimOutcomeCode;
import io.sluice.broker.log.codecs.BackfillClaimPhaseCode;
import io.sluice.broker.log.codecs.BackfillClaimResultDecoder;
import io.sluice.broker.log.codecs.BackfillClaimResultEncoder;
import io.sluice.broker.log.codecs.BooleanType;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimOutcome;
import io.sluice.protocol.codecs.BackfillClaimPhase;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.util.Arrays;

/**
 * The one door to the claim layouts of the broker log schema: the {@code BackfillClaimEntry} (30-39: a control entry)
 * and the {@code BackfillClaimResult} (40-49: the apply's reply to the proposer), through the generated codecs, and
 * the mapping of the log codes to the wire enums the state uses (by name; the codes are the same, but each schema owns
 * its own). Decoding checks every length against the bytes before reading, so a corrupt entry is refused, never read
 * out of bounds or allocated for. Stateless.
 */
final class ClaimCodes
{
    /** Longest text a claim layout holds (a reason names a few ids and figures). */
    static final int MAX_TEXT_BYTES = 8 * 1024;

    private ClaimCodes()
    {
    }

    // ---------------------------------------------------------------------------------------------- entry

    static byte[] encodeEntry(final BackfillClaimChange change)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(128);
        final BackfillClaimEntryEncoder encoder = new BackfillClaimEntryEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .timestampMs(change.timestampMs())
            .action(BackfillClaimActionCode.valueOf(change.action().name()))
            .expectedPhase(BackfillClaimPhaseCode.valueOf(change.expectedPhase().name()))
            .empty(change.empty() ? BooleanType.TRUE : BooleanType.FALSE)
            .proposerBrokerId(change.proposerBrokerId())
            .exporterId(change.exporterId())
            .backfillId(change.backfillId())
            .expectedBackfillId(change.expectedBackfillId());
        return Arrays.copyOf(buffer.byteArray(), MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    /** Decodes the body of a BackfillClaimEntry whose header {@code header} is wrapped over {@code buffer} at 0. */
    static BackfillClaimChange decodeEntry(final DirectBuffer buffer, final MessageHeaderDecoder header, final long index)
        throws IOException
    {
        final String what = "control entry " + index + " (backfill claim)";
        final UnsafeBuffer bytes = new UnsafeBuffer(buffer, 0, buffer.capacity());
        try
        {
            if (header.blockLength() < BackfillClaimEntryDecoder.BLOCK_LENGTH)
            {
                throw new IOException(what + " has a block of " + header.blockLength() + " bytes");
            }
            final BackfillClaimEntryDecoder entry = new BackfillClaimEntryDecoder()
                .wrap(bytes, header.encodedLength(), header.blockLength(), header.version());
            final BackfillClaimAction action = action(entry.action(), what);
            final BackfillClaimPhase expected = phase(entry.expectedPhase(), what);
            final BooleanType empty = entry.empty();
            if (empty != BooleanType.TRUE && empty != BooleanType.FALSE)
            {
                throw new IOException(what + " has empty " + entry.emptyRaw());
            }
            final String exporterId = text(bytes, entry.limit(), entry.exporterIdLength(), what, entry::exporterId);
            final String backfillId = text(bytes, entry.limit(), entry.backfillIdLength(), what, entry::backfillId);
            final String expectedBackfillId =
                text(bytes, entry.limit(), entry.expectedBackfillIdLength(), what, entry::expectedBackfillId);
            return new BackfillClaimChange(action, exporterId, backfillId, expected, expectedBackfillId,
                empty == BooleanType.TRUE, entry.timestampMs(), entry.proposerBrokerId());
        }
        catch (final IndexOutOfBoundsException | IllegalArgumentException e)
        {
            throw new IOException(what + " is not a valid claim change: " + e.getMessage(), e);
        }
    }

    // ---------------------------------------------------------------------------------------------- result

    static byte[] encodeResult(final BackfillClaimReply reply)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        final BackfillClaim held = reply.held();
        final BackfillClaimResultEncoder encoder = new BackfillClaimResultEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .outcome(BackfillClaimOutcomeCode.valueOf(reply.outcome().name()))
            .heldPhase(held == null ? BackfillClaimPhaseCode.NONE : BackfillClaimPhaseCode.valueOf(held.phase().name()))
            .heldClaimedAtMs(held == null ? 0 : held.claimedAtMs())
            .heldClaimIndex(held == null ? 0 : held.claimIndex())
            .heldBackfillId(held == null ? "" : held.backfillId())
            .reason(reply.reason());
        return Arrays.copyOf(buffer.byteArray(), MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    /**
     * Decodes the reply of the claim entry of {@code exporterId}.
     *
     * @throws IOException when the bytes are not a BackfillClaimResult.
     */
    static BackfillClaimReply decodeResult(final DirectBuffer buffer, final String exporterId) throws IOException
    {
        final String what = "backfill claim result";
        final UnsafeBuffer bytes = new UnsafeBuffer(buffer, 0, buffer.capacity());
        try
        {
            if (bytes.capacity() < MessageHeaderDecoder.ENCODED_LENGTH)
            {
                throw new IOException(what + " of " + bytes.capacity() + " bytes");
            }
            final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(bytes, 0);
            if (header.schemaId() != MessageHeaderDecoder.SCHEMA_ID ||
                header.templateId() != BackfillClaimResultDecoder.TEMPLATE_ID ||
                header.blockLength() < BackfillClaimResultDecoder.BLOCK_LENGTH)
            {
                throw new IOException("not a " + what + ": schema " + header.schemaId() + ", template " +
                    header.templateId() + ", block " + header.blockLength());
            }
            final BackfillClaimResultDecoder result = new BackfillClaimResultDecoder()
                .wrap(bytes, header.encodedLength(), header.blockLength(), header.version());
            final BackfillClaimOutcome outcome = switch (result.outcome())
            {
                case CLAIMED, CONFLICT, STARTED, RELEASED, NOT_HELD -> BackfillClaimOutcome.valueOf(result.outcome().name());
                default -> throw new IOException(what + " has outcome " + result.outcomeRaw());
            };
            final BackfillClaimPhaseCode heldPhase = result.heldPhase();
            final long claimedAtMs = result.heldClaimedAtMs();
            final long claimIndex = result.heldClaimIndex();
            final String heldBackfillId = text(bytes, result.limit(), result.heldBackfillIdLength(), what,
                result::heldBackfillId);
            final String reason = text(bytes, result.limit(), result.reasonLength(), what, result::reason);
            final BackfillClaim held = heldPhase == BackfillClaimPhaseCode.NONE ? null :
                new BackfillClaim(exporterId, heldBackfillId, phase(heldPhase, what), claimedAtMs, claimIndex);
            return new BackfillClaimReply(outcome, held, reason);
        }
        catch (final IndexOutOfBoundsException | IllegalArgumentException e)
        {
            throw new IOException(what + " is not valid: " + e.getMessage(), e);
        }
    }

    // ---------------------------------------------------------------------------------------------- codes

    static BackfillClaimPhase phase(final BackfillClaimPhaseCode code, final String what) throws IOException
    {
        return switch (code)
        {
            case NONE -> BackfillClaimPhase.NONE;
            case STARTING -> BackfillClaimPhase.STARTING;
            case STARTED -> BackfillClaimPhase.STARTED;
            default -> throw new IOException(what + " has claim phase code " + code);
        };
    }

    static BackfillClaimPhaseCode code(final BackfillClaimPhase phase)
    {
        return BackfillClaimPhaseCode.valueOf(phase.name());
    }

    private static BackfillClaimAction action(final BackfillClaimActionCode code, final String what) throws IOException
    {
        return switch (code)
        {
            case CLAIM -> BackfillClaimAction.CLAIM;
            case STARTED -> BackfillClaimAction.STARTED;
            case RELEASE -> BackfillClaimAction.RELEASE;
            default -> throw new IOException(what + " has claim action code " + code);
        };
    }

    /** A var-data string, its length checked against the bytes and the largest text a claim layout holds first. */
    static String text(final DirectBuffer bytes, final int limit, final long length, final String what,
        final java.util.function.Supplier<String> read) throws IOException
    {
        if (length < 0 || length > MAX_TEXT_BYTES || limit + 4L + length > bytes.capacity())
        {
            throw new IOException(what + ": a text of " + length + " bytes runs past its " + bytes.capacity() + " bytes");
        }
        return read.get();
    }
}
