package io.sluice.broker.control;

import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimPhase;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One change of an exporter's backfill claim, as a {@code BackfillClaimEntry} carries it ({@link ControlEntries},
 * applied by {@link BackfillClaimTable#apply}). Immutable; the constructor refuses what no apply could take.
 *
 * @param expectedPhase      with CLAIM, the phase of the claim the proposer saw (NONE: it saw none); NONE otherwise.
 * @param expectedBackfillId with CLAIM, the backfill of that claim ("" for none); "" otherwise.
 * @param empty              with CLAIM, the backfill has nothing to register: its claim is STARTED at once and it is
 *                           recorded as an {@link EmptyBackfill}.
 * @param timestampMs        the proposing broker's clock at proposal: the replicated time of the takeover bound.
 */
public record BackfillClaimChange(
    BackfillClaimAction action,
    String exporterId,
    String backfillId,
    BackfillClaimPhase expectedPhase,
    String expectedBackfillId,
    boolean empty,
    long timestampMs,
    int proposerBrokerId)
{
    public BackfillClaimChange
    {
        Objects.requireNonNull(action, "action");
        Objects.requireNonNull(expectedPhase, "expectedPhase");
        expectedBackfillId = expectedBackfillId == null ? "" : expectedBackfillId;
        checkId("exporter id", exporterId);
        checkId("backfill id", backfillId);
        switch (action)
        {
            case CLAIM ->
            {
                if (expectedPhase == BackfillClaimPhase.NONE != expectedBackfillId.isEmpty())
                {
                    throw new IllegalArgumentException("a claim expects a backfill and its phase, or none: was '" +
                        expectedBackfillId + "' " + expectedPhase);
                }
                if (expectedPhase != BackfillClaimPhase.NONE)
                {
                    checkId("expected backfill id", expectedBackfillId);
                    checkPhase(expectedPhase);
                }
            }
            case STARTED, RELEASE ->
            {
                if (expectedPhase != BackfillClaimPhase.NONE || !expectedBackfillId.isEmpty() || empty)
                {
                    throw new IllegalArgumentException(action + " acts on the backfill's own claim: it expects " +
                        "nothing and is not empty");
                }
            }
            default -> throw new IllegalArgumentException("unknown claim action " + action);
        }
    }

    /** A compare-and-set from {@code seen} (null: no claim) to a claim of {@code backfillId}. */
    public static BackfillClaimChange claim(
        final String exporterId, final String backfillId, final BackfillClaim seen, final boolean empty,
        final long timestampMs, final int proposerBrokerId)
    {
        return new BackfillClaimChange(BackfillClaimAction.CLAIM, exporterId, backfillId,
            seen == null ? BackfillClaimPhase.NONE : seen.phase(), seen == null ? "" : seen.backfillId(), empty,
            timestampMs, proposerBrokerId);
    }

    public static BackfillClaimChange of(
        final BackfillClaimAction action, final String exporterId, final String backfillId, final long timestampMs,
        final int proposerBrokerId)
    {
        return new BackfillClaimChange(action, exporterId, backfillId, BackfillClaimPhase.NONE, "", false, timestampMs,
            proposerBrokerId);
    }

    private static void checkId(final String what, final String id)
    {
        if (id == null || id.isEmpty() || id.getBytes(StandardCharsets.UTF_8).length > BackfillClaimTable.MAX_ID_BYTES)
        {
            throw new IllegalArgumentException(what + " must be 1.." + BackfillClaimTable.MAX_ID_BYTES +
                " bytes of UTF-8, was '" + (id == null ? "" : abbreviate(id)) + "'");
        }
    }

    private static void checkPhase(final BackfillClaimPhase phase)
    {
        if (phase != BackfillClaimPhase.STARTING && phase != BackfillClaimPhase.STARTED)
        {
            throw new IllegalArgumentException("unknown claim phase " + phase);
        }
    }

    static String abbreviate(final String id)
    {
        return id.length() <= BackfillClaimTable.MAX_ID_BYTES ? id : id.substring(0, BackfillClaimTable.MAX_ID_BYTES) + "...";
    }
}
