package io.sluice.gateway.backfill;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The gateway's client of the brokers' backfill API: one request to one partition leader (or, for claims, to one
 * broker), no retry (the service decides what to do with a failure). Futures fail with
 * {@link io.sluice.gateway.broker.BrokerErrorException} for an ErrorResponse,
 * {@link io.sluice.gateway.broker.MalformedResponseException} for an undecodable answer, and the transport's
 * timeout / unreachable exceptions. Thread-safe.
 */
public interface BackfillClient
{
    /**
     * Resets the exporter to the partition's latest position and registers the backfill of the skipped range
     * with {@code taskCount} tasks numbered from {@code firstTaskId}: one replicated step on the leader, taken only
     * while the backfill holds the exporter's claim taken at control group index {@code claimIndex} (0: none named).
     *
     * @return the partition's tasks of that backfill, with the ranges the leader computed.
     */
    CompletableFuture<List<BackfillTaskStatus>> start(
        int brokerId, int partitionId, String backfillId, String exporterId, int taskCount, int firstTaskId,
        long claimIndex, Duration timeout);

    /**
     * Changes an exporter's backfill claim in the cluster control group through any broker, which answers once its own
     * replica applied the change.
     */
    CompletableFuture<ClaimAnswer> claim(int brokerId, ClaimRequest request, Duration timeout);

    /**
     * Every claim and empty backfill the control group holds, read by its leader ({@code brokerId} if it leads;
     * otherwise the future fails NOT_LEADER naming the leader it knows).
     */
    CompletableFuture<ControlBackfills> claims(int brokerId, Duration timeout);

    /** The partition's tasks of one backfill, or of every backfill when {@code backfillId} is empty. */
    CompletableFuture<List<BackfillTaskStatus>> status(int brokerId, int partitionId, String backfillId, Duration timeout);

    /** Cancels the backfill's unfinished tasks on the partition; answers its tasks after the cancel. */
    CompletableFuture<List<BackfillTaskStatus>> cancel(int brokerId, int partitionId, String backfillId, Duration timeout);
}
