package io.sluice.gateway.backfill;

import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimPhase;

/**
 * A change of one exporter's backfill claim, as a BackfillClaimRequest carries it: CLAIM (a compare-and-set from the
 * claim the gateway saw, or none; {@code empty} when there is nothing to register), STARTED or RELEASE of the
 * backfill's own claim. Immutable.
 */
public record ClaimRequest(
    BackfillClaimAction action, String exporterId, String backfillId, BackfillClaimPhase expectedPhase,
    String expectedBackfillId, boolean empty)
{
    /** Takes the claim for {@code backfillId} if {@code seen} (null: none) is still the claim held. */
    public static ClaimRequest claim(
        final String exporterId, final String backfillId, final ControlBackfills.Claim seen, final boolean empty)
    {
        return new ClaimRequest(BackfillClaimAction.CLAIM, exporterId, backfillId,
            seen == null ? BackfillClaimPhase.NONE : seen.phase(), seen == null ? "" : seen.backfillId(), empty);
    }

    /** STARTED or RELEASE of the backfill's own claim. */
    public static ClaimRequest of(final BackfillClaimAction action, final String exporterId, final String backfillId)
    {
        return new ClaimRequest(action, exporterId, backfillId, BackfillClaimPhase.NONE, "", false);
    }
}
