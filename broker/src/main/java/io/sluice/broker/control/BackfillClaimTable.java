package io.sluice.broker.control;

import io.sluice.protocol.codecs.BackfillClaimOutcome;
import io.sluice.protocol.codecs.BackfillClaimPhase;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The backfill part of the control group's replicated state (issue 15): every exporter's backfill claim and the latest
 * backfills that had nothing to export. A reset takes its exporter's claim before it registers anything, so of two
 * gateways racing to reset one exporter exactly one goes on, whichever gateway they are.
 * <p>
 * <b>The claim.</b> An exporter has no claim, or one held by a backfill in one of two phases:
 * <ul>
 *   <li>{@code STARTING}: taken, its registrations on the partitions' leaders under way;</li>
 *   <li>{@code STARTED}: the gateway that took it finished registering (successfully or not).</li>
 * </ul>
 * A CLAIM entry is a compare-and-set: it names the claim its proposer saw (backfill and phase, or none) before it
 * checked that no partition holds an unfinished task of the exporter, and takes the claim only if
 * <ol>
 *   <li>that is still the claim held (so, of two resets that saw the same claim, the first applied wins and the
 *   second is a CONFLICT naming the winner), and</li>
 *   <li>the claim seen was none or STARTED (its backfill registered before the proposer's check, so that check saw
 *   every task of it: a finished one may be replaced), or STARTING for at least {@link #STARTING_TAKEOVER_MS} by the
 *   entry's replicated clock (the gateway that took it died between claiming and registering; leaders refuse its
 *   registrations after {@link #REGISTRATION_WINDOW_MS}, so none can still appear after the proposer's check). A
 *   STARTING claim younger than that is being started right now: CONFLICT.</li>
 * </ol>
 * STARTED and RELEASE act on a backfill's own claim only (else NOT_HELD, nothing changed). A CLAIM of a backfill that
 * holds the claim already (the same entry committed twice) answers CLAIMED and changes nothing.
 * <p>
 * <b>Empty backfills.</b> A CLAIM with {@code empty} is STARTED at once and its backfill recorded; the latest
 * {@value #MAX_EMPTY_BACKFILLS} are kept, oldest dropped first.
 * <p>
 * Deterministic (no clock of its own, no randomness): applied in log order on every replica, it holds the same claims
 * and answers the same replies. Thread-safe: the apply thread changes it while request threads read.
 */
public final class BackfillClaimTable
{
    /** A STARTING claim younger than this (by the entries' replicated clock) is not taken over. */
    public static final long STARTING_TAKEOVER_MS = 60_000;
    /**
     * A partition leader registers a claimed backfill only this long after its claim was taken (by the leader's clock):
     * well inside the takeover bound, so no registration of a claim can apply after another reset took it over.
     */
    public static final long REGISTRATION_WINDOW_MS = 30_000;
    /** Empty backfills kept for the backfill views. */
    public static final int MAX_EMPTY_BACKFILLS = 32;
    /** Exporters with a claim at most: proposers check the exporter is configured, this bounds the state regardless. */
    public static final int MAX_CLAIMS = 1024;
    /** Longest exporter or backfill id, in UTF-8 bytes (the gateway's backfill ids are UUIDs). */
    public static final int MAX_ID_BYTES = 128;

    private final Map<String, BackfillClaim> claims = new TreeMap<>();
    private final LinkedHashMap<String, EmptyBackfill> emptyBackfills = new LinkedHashMap<>();

    /** Applies one change committed at control group index {@code index}; see the class comment for the rules. */
    public synchronized BackfillClaimReply apply(final BackfillClaimChange change, final long index)
    {
        final BackfillClaim held = claims.get(change.exporterId());
        return switch (change.action())
        {
            case CLAIM -> claim(change, held, index);
            case STARTED -> started(change, held);
            case RELEASE -> release(change, held);
            default -> throw new IllegalArgumentException("unknown claim action " + change.action());
        };
    }

    private BackfillClaimReply claim(final BackfillClaimChange change, final BackfillClaim held, final long index)
    {
        final String exporter = "exporter '" + change.exporterId() + "'";
        if (held != null && held.backfillId().equals(change.backfillId()))
        {
            return new BackfillClaimReply(BackfillClaimOutcome.CLAIMED, held, "backfill " + held.backfillId() +
                " holds the claim of " + exporter + " already");
        }
        if (!isSeen(change, held))
        {
            return new BackfillClaimReply(BackfillClaimOutcome.CONFLICT, held, held == null ?
                "the claim of " + exporter + " this reset saw (backfill " + change.expectedBackfillId() + ", " +
                    change.expectedPhase() + ") was released meanwhile; retry the reset" :
                "backfill " + held.backfillId() + " took the claim of " + exporter + " while this reset was checked " +
                    "(another reset of the exporter started at the same time; it is " + held.phase() + ")");
        }
        if (held != null && held.phase() == BackfillClaimPhase.STARTING)
        {
            final long ageMs = change.timestampMs() - held.claimedAtMs();
            if (ageMs < STARTING_TAKEOVER_MS)
            {
                return new BackfillClaimReply(BackfillClaimOutcome.CONFLICT, held, "backfill " + held.backfillId() +
                    " holds the claim of " + exporter + " and is being started (claimed " + Math.max(0, ageMs) +
                    " ms before this reset); a claim whose start never registered anything is released " +
                    STARTING_TAKEOVER_MS / 1000 + " s after it was taken");
            }
        }
        if (held == null && claims.size() >= MAX_CLAIMS)
        {
            return new BackfillClaimReply(BackfillClaimOutcome.CONFLICT, null, "the control group holds claims of " +
                MAX_CLAIMS + " exporters already, the most it keeps");
        }
        final BackfillClaim taken = new BackfillClaim(change.exporterId(), change.backfillId(),
            change.empty() ? BackfillClaimPhase.STARTED : BackfillClaimPhase.STARTING, change.timestampMs(), index);
        claims.put(change.exporterId(), taken);
        if (change.empty())
        {
            emptyBackfills.remove(change.backfillId());
            emptyBackfills.put(change.backfillId(),
                new EmptyBackfill(change.backfillId(), change.exporterId(), change.timestampMs()));
            final Iterator<String> oldest = emptyBackfills.keySet().iterator();
            while (emptyBackfills.size() > MAX_EMPTY_BACKFILLS)
            {
                oldest.next();
                oldest.remove();
            }
        }
        return new BackfillClaimReply(BackfillClaimOutcome.CLAIMED, taken, "backfill " + taken.backfillId() +
            " took the claim of " + exporter + (held == null ? "" : " over from " + held) +
            (change.empty() ? ", with nothing to export" : ""));
    }

    /** Whether the claim held is the one the change expects (same backfill in the same phase, or none). */
    private static boolean isSeen(final BackfillClaimChange change, final BackfillClaim held)
    {
        if (held == null)
        {
            return change.expectedPhase() == BackfillClaimPhase.NONE;
        }
        return held.backfillId().equals(change.expectedBackfillId()) && held.phase() == change.expectedPhase();
    }

    private BackfillClaimReply started(final BackfillClaimChange change, final BackfillClaim held)
    {
        if (held == null || !held.backfillId().equals(change.backfillId()))
        {
            return notHeld(change, held);
        }
        final BackfillClaim started = held.started();
        claims.put(change.exporterId(), started);
        return new BackfillClaimReply(BackfillClaimOutcome.STARTED, started, "backfill " + held.backfillId() +
            " of exporter '" + change.exporterId() + "' is started");
    }

    private BackfillClaimReply release(final BackfillClaimChange change, final BackfillClaim held)
    {
        if (held == null || !held.backfillId().equals(change.backfillId()))
        {
            return notHeld(change, held);
        }
        claims.remove(change.exporterId());
        return new BackfillClaimReply(BackfillClaimOutcome.RELEASED, null, "backfill " + held.backfillId() +
            " released the claim of exporter '" + change.exporterId() + "'");
    }

    private static BackfillClaimReply notHeld(final BackfillClaimChange change, final BackfillClaim held)
    {
        return new BackfillClaimReply(BackfillClaimOutcome.NOT_HELD, held, "backfill " + change.backfillId() +
            " does not hold the claim of exporter '" + change.exporterId() + "' (" +
            (held == null ? "nobody does" : held + " does") + ")");
    }

    /**
     * Why a partition leader must not register {@code backfillId} of {@code exporterId} now, by its clock
     * {@code nowMs}, or null when it may: with {@code claimed} (the request names its claim's index, applied here) the
     * claim must be that backfill's, STARTING, and younger than {@link #REGISTRATION_WINDOW_MS}; without, no other
     * backfill's claim may be being started.
     */
    public synchronized String registrationRefusal(
        final String exporterId, final String backfillId, final boolean claimed, final long nowMs)
    {
        final BackfillClaim held = claims.get(exporterId);
        if (!claimed)
        {
            return held != null && held.phase() == BackfillClaimPhase.STARTING && !held.backfillId().equals(backfillId) &&
                nowMs < held.releasableAtMs() ?
                "exporter '" + exporterId + "': " + held + " is being started; a reset without a claim waits for it" :
                null;
        }
        if (held == null || !held.backfillId().equals(backfillId))
        {
            return "backfill " + backfillId + " does not hold the claim of exporter '" + exporterId + "' (" +
                (held == null ? "nobody does" : held + " does") + "): it was released or taken over; nothing registered";
        }
        if (held.phase() != BackfillClaimPhase.STARTING)
        {
            return "backfill " + backfillId + " of exporter '" + exporterId + "' is started already: no more " +
                "registrations are taken for it";
        }
        if (nowMs - held.claimedAtMs() >= REGISTRATION_WINDOW_MS)
        {
            return "backfill " + backfillId + " of exporter '" + exporterId + "' was claimed " +
                (nowMs - held.claimedAtMs()) + " ms ago: registrations are taken within " + REGISTRATION_WINDOW_MS +
                " ms of the claim, so a claim released " + STARTING_TAKEOVER_MS + " ms after it was taken stays released";
        }
        return null;
    }

    /** The claims and the empty backfills at one moment (between two applies). */
    public record Contents(List<BackfillClaim> claims, List<EmptyBackfill> emptyBackfills)
    {
    }

    public synchronized Contents contents()
    {
        return new Contents(claims(), emptyBackfills());
    }

    public synchronized BackfillClaim claim(final String exporterId)
    {
        return claims.get(exporterId);
    }

    /** Every claim, by exporter id. */
    public synchronized List<BackfillClaim> claims()
    {
        return List.copyOf(claims.values());
    }

    /** The recorded empty backfills, oldest first. */
    public synchronized List<EmptyBackfill> emptyBackfills()
    {
        return List.copyOf(emptyBackfills.values());
    }

    /** Replaces everything with a snapshot's claims and empty backfills (kept in the order given, bounded). */
    public synchronized void restore(final List<BackfillClaim> restoredClaims, final List<EmptyBackfill> restoredEmpty)
    {
        claims.clear();
        emptyBackfills.clear();
        for (final BackfillClaim claim : restoredClaims)
        {
            claims.put(claim.exporterId(), claim);
        }
        final List<EmptyBackfill> kept = new ArrayList<>(restoredEmpty);
        for (final EmptyBackfill empty : kept.subList(Math.max(0, kept.size() - MAX_EMPTY_BACKFILLS), kept.size()))
        {
            emptyBackfills.put(empty.backfillId(), empty);
        }
    }
}
