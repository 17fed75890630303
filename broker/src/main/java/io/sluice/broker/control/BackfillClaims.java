package io.sluice.broker.control;

import io.sluice.broker.errors.PartitionException;
import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimPhase;
import io.sluice.protocol.codecs.ErrorCode;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * The backfill claims on this broker (issue 15), behind the command API: a change of an exporter's claim committed
 * through the control group and answered once this broker's replica applied it; a read of every claim by the group's
 * leader; and the check a partition leader makes before it registers a claimed backfill. The rules are
 * {@link BackfillClaimTable}'s. Every wait is bounded by the admin timeout. Thread-safe.
 */
public final class BackfillClaims
{
    /** A change's outcome and the control group index of its entry (a CLAIM's index names the claim it took). */
    public record Answer(long index, BackfillClaimReply reply)
    {
    }

    /** What the control group holds, read by its leader: the leader's clock and the index the read reflects. */
    public record View(long nowMs, long appliedIndex, List<BackfillClaim> claims, List<EmptyBackfill> emptyBackfills)
    {
    }

    private final int brokerId;
    private final ControlGroup control;
    private final Set<String> exporterIds;
    private final Clock clock;
    private final ControlWaits waits;

    /**
     * @param exporterIds the configured exporters: a claim of another is refused before anything is proposed.
     * @param clock       stamps the entries (the replicated time of the takeover bound) and times the registration
     *                    window.
     */
    public BackfillClaims(
        final int brokerId, final ControlGroup control, final Set<String> exporterIds, final Duration timeout,
        final Clock clock)
    {
        this.brokerId = brokerId;
        this.control = control;
        this.exporterIds = new TreeSet<>(exporterIds);
        this.clock = clock;
        this.waits = new ControlWaits(brokerId, control, timeout, "not applied");
    }

    /**
     * Commits a change of {@code exporterId}'s claim; completes once this replica applied it, or fails with a
     * {@link PartitionException}: EXPORTER_NOT_FOUND or INVALID_ARGUMENT (nothing proposed), TIMEOUT (not committed and
     * applied within the admin timeout: it may still be), UNAVAILABLE (the control group could not be reached).
     */
    public CompletableFuture<Answer> change(
        final BackfillClaimAction action, final String exporterId, final String backfillId,
        final BackfillClaimPhase expectedPhase, final String expectedBackfillId, final boolean empty)
    {
        if (!exporterIds.contains(exporterId))
        {
            return CompletableFuture.failedFuture(new PartitionException(ErrorCode.EXPORTER_NOT_FOUND, 0, -1,
                "broker " + brokerId + ": unknown exporter '" + BackfillClaimChange.abbreviate(exporterId) +
                    "' (configured: " + exporterIds + ")"));
        }
        final BackfillClaimChange change;
        try
        {
            change = new BackfillClaimChange(action, exporterId, backfillId, expectedPhase, expectedBackfillId, empty,
                clock.millis(), brokerId);
        }
        catch (final IllegalArgumentException e)
        {
            return CompletableFuture.failedFuture(new PartitionException(ErrorCode.INVALID_ARGUMENT, 0, -1,
                "broker " + brokerId + ": " + e.getMessage()));
        }
        return waits.commit(ControlEntries.backfillClaim(change),
                (bytes) -> ClaimCodes.decodeResult(bytes, exporterId),
                action + " of exporter '" + exporterId + "' by backfill " + backfillId)
            .thenApply((applied) -> new Answer(applied.index(), applied.reply()));
    }

    /**
     * Every claim and empty backfill, read on the control group's ready leader once its replica applied its commit
     * index, so the read sees every change answered before it (except on a leader deposed without knowing it yet,
     * until its term ends). Another broker fails with NOT_LEADER naming the leader it knows.
     */
    public CompletableFuture<View> read()
    {
        if (!control.isLeader())
        {
            final int leader = control.leaderId();
            return CompletableFuture.failedFuture(new PartitionException(ErrorCode.NOT_LEADER, 0, leader,
                "broker " + brokerId + ": not the control group's leader (" +
                    (leader < 0 ? "no leader known" : "leader is " + leader) + ")"));
        }
        final long commitIndex = control.commitIndex();
        return waits.bounded(control.awaitApplied(commitIndex)
            .thenApply((applied) ->
            {
                final BackfillClaimTable.Contents contents = control.state().backfillClaims().contents();
                return new View(clock.millis(), control.stateMachine().lastAppliedIndex(), contents.claims(),
                    contents.emptyBackfills());
            }), "reading the backfill claims at control index " + commitIndex);
    }

    /**
     * Why this broker, leading a partition, must not register {@code backfillId} of {@code exporterId}, or null when
     * it may ({@link BackfillClaimTable#registrationRefusal}). With a {@code claimIndex} (at least 1) it first waits until
     * this replica applied the claim; 0 means the request names no claim.
     */
    public CompletableFuture<String> registrationRefusal(final String exporterId, final String backfillId, final long claimIndex)
    {
        final BackfillClaimTable table = control.state().backfillClaims();
        if (claimIndex < 1)
        {
            return CompletableFuture.completedFuture(table.registrationRefusal(exporterId, backfillId, false, clock.millis()));
        }
        return waits.bounded(control.awaitApplied(claimIndex)
            .thenApply((applied) -> table.registrationRefusal(exporterId, backfillId, true, clock.millis())),
            "the claim of backfill " + backfillId + " at control index " + claimIndex);
    }
}
