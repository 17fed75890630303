package io.sluice.broker.control;

import java.util.Objects;

/**
 * A backfill that had nothing to export (every partition was at its latest position): no partition holds a task of
 * it, so the control group records it ({@link BackfillClaimTable}) for every gateway to show. Immutable.
 *
 * @param createdAtMs the proposing broker's clock when it was claimed, replicated.
 */
public record EmptyBackfill(String backfillId, String exporterId, long createdAtMs)
{
    public EmptyBackfill
    {
        Objects.requireNonNull(backfillId, "backfillId");
        Objects.requireNonNull(exporterId, "exporterId");
    }
}
