package io.sluice.gateway.backfill;

import io.sluice.protocol.codecs.BackfillClaimPhase;

import java.util.List;
import java.util.Optional;

/**
 * What the cluster control group holds of backfills, as its leader answered a BackfillClaimsRequest: every exporter's
 * claim and the latest backfills that had nothing to export. The only backfill state beyond the partitions' tasks, and
 * it lives in the brokers: gateways keep none of it. Immutable.
 *
 * @param nowMs the answering leader's clock, for judging a claim's {@link Claim#releasableAtMs}.
 */
public record ControlBackfills(long nowMs, List<Claim> claims, List<Empty> emptyBackfills)
{
    public ControlBackfills
    {
        claims = List.copyOf(claims);
        emptyBackfills = List.copyOf(emptyBackfills);
    }

    /**
     * One exporter's claim: the backfill being started ({@code STARTING}) or the last one started ({@code STARTED}).
     *
     * @param releasableAtMs for STARTING, from when another reset may take it over; 0 for STARTED.
     */
    public record Claim(String exporterId, String backfillId, BackfillClaimPhase phase, long claimedAtMs,
        long releasableAtMs, long claimIndex)
    {
        /** Whether it is being started now, by the leader's clock: no other reset may take it. */
        public boolean isBeingStarted(final long nowMs)
        {
            return phase == BackfillClaimPhase.STARTING && nowMs < releasableAtMs;
        }
    }

    /** A backfill that had nothing to export: SUCCEEDED from its creation, with no task anywhere. */
    public record Empty(String backfillId, String exporterId, long createdAtMs)
    {
    }

    public Optional<Claim> claimOf(final String exporterId)
    {
        return claims.stream().filter(c -> c.exporterId().equals(exporterId)).findFirst();
    }

    public Optional<Empty> emptyBackfill(final String backfillId)
    {
        return emptyBackfills.stream().filter(e -> e.backfillId().equals(backfillId)).findFirst();
    }
}
