package io.sluice.gateway.broker;

import io.sluice.protocol.cluster.PartitionReplica;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The gateway's SBE client of the brokers' command, admin and topology APIs. Many requests may be in
 * flight at once; every one has a deadline. Thread-safe.
 * <p>
 * Futures fail with {@link io.sluice.protocol.transport.RequestTimeoutException} when the deadline passes,
 * {@link io.sluice.protocol.transport.PeerUnreachableException} when the broker cannot be reached, and
 * {@link BrokerErrorException} when the broker answered with an error.
 */
public interface BrokerClient extends AutoCloseable
{
    /**
     * Sends one pair request of an exporting operation to exactly the named replica, with no retry. The request names
     * the whole operation, so its brokers commit it once for all its pairs.
     */
    CompletableFuture<AdminResult> admin(PartitionReplica target, AdminOperation operation, Duration timeout);

    /**
     * Appends a batch to a partition's leader, following NOT_LEADER answers and leader changes until the
     * deadline; completes once the batch is committed by a quorum.
     */
    default CompletableFuture<AppendResult> append(int partitionId, List<RecordToAppend> records, Duration timeout)
    {
        return append(partitionId, records, null, timeout);
    }

    /**
     * Appends a batch under an idempotency id (null for none; with an id the batch may be empty, a claim of the id):
     * every attempt carries it, so a batch is committed at most once; a remembered id answers the positions it was
     * first given, and fails with {@link BrokerErrorException} CONFLICT when it came with another request body.
     */
    CompletableFuture<AppendResult> append(int partitionId, List<RecordToAppend> records, AppendId id, Duration timeout);

    /** Asks one broker for the partitions it hosts. */
    CompletableFuture<BrokerTopology> topology(int brokerId, Duration timeout);

    @Override
    void close();
}
