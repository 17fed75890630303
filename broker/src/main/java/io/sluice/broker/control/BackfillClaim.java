package io.sluice.broker.control;

import io.sluice.protocol.codecs.BackfillClaimPhase;

import java.util.Objects;

/**
 * One exporter's backfill claim, as the control group holds it ({@link BackfillClaimTable}): the backfill that may
 * register a reset of the exporter now ({@code STARTING}), or the last one that did ({@code STARTED}). Immutable.
 *
 * @param claimedAtMs when it was taken: the proposing broker's clock, carried in the entry, so every replica reads the
 *                    same time.
 * @param claimIndex  the control group index of the entry that took it.
 */
public record BackfillClaim(String exporterId, String backfillId, BackfillClaimPhase phase, long claimedAtMs, long claimIndex)
{
    public BackfillClaim
    {
        Objects.requireNonNull(exporterId, "exporterId");
        Objects.requireNonNull(backfillId, "backfillId");
        if (phase != BackfillClaimPhase.STARTING && phase != BackfillClaimPhase.STARTED)
        {
            throw new IllegalArgumentException("a held claim is STARTING or STARTED, was " + phase);
        }
    }

    /**
     * From when another reset may take a STARTING claim over (if none of its tasks is registered anywhere: the
     * taker checks); 0 for a STARTED one, which any reset that found no unfinished task of the exporter may take.
     */
    public long releasableAtMs()
    {
        return phase == BackfillClaimPhase.STARTING ? claimedAtMs + BackfillClaimTable.STARTING_TAKEOVER_MS : 0;
    }

    BackfillClaim started()
    {
        return new BackfillClaim(exporterId, backfillId, BackfillClaimPhase.STARTED, claimedAtMs, claimIndex);
    }

    @Override
    public String toString()
    {
        return "backfill " + backfillId + " (" + phase + ", claimed at " + claimedAtMs + " ms, control index " + claimIndex + ")";
    }
}
