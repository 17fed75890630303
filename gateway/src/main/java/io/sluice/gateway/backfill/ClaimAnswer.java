package io.sluice.gateway.backfill;

import io.sluice.protocol.codecs.BackfillClaimOutcome;
import io.sluice.protocol.codecs.BackfillClaimPhase;

/**
 * A broker's answer to a {@link ClaimRequest}, once its replica of the control group applied it: the outcome, the
 * control group index of the entry (a CLAIM's names the claim it took, which the registrations carry), the claim held
 * after it and the control group's reason (naming the backfill that holds the claim). Immutable.
 *
 * @param heldBackfillId empty when no claim is held after the entry.
 */
public record ClaimAnswer(
    BackfillClaimOutcome outcome, long claimIndex, BackfillClaimPhase heldPhase, String heldBackfillId,
    long heldClaimedAtMs, String reason)
{
}
