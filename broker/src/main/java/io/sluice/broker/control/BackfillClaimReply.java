package io.sluice.broker.control;

import io.sluice.protocol.codecs.BackfillClaimOutcome;

import java.util.Objects;

/**
 * What applying one {@link BackfillClaimChange} did, for its proposer: the outcome, the exporter's claim after it
 * (null when none is held) and a reason naming the backfill that holds the claim. Deterministic: every replica
 * computes the same reply for the same entry. Travels from the apply to the proposer as a {@code BackfillClaimResult}
 * ({@link ClaimCodes}). Immutable.
 */
public record BackfillClaimReply(BackfillClaimOutcome outcome, BackfillClaim held, String reason)
{
    public BackfillClaimReply
    {
        Objects.requireNonNull(outcome, "outcome");
        reason = reason == null ? "" : reason;
    }
}
