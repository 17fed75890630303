package io.sluice.gateway.rebalance;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Asks one broker to move a partition's leadership to its preferred broker. Futures fail with
 * {@link io.sluice.gateway.broker.BrokerErrorException} when the broker answered with an error (NOT_LEADER names
 * the leader it knows), {@link io.sluice.protocol.transport.RequestTimeoutException} at the deadline, and
 * {@link io.sluice.protocol.transport.PeerUnreachableException} when the broker cannot be reached. Thread-safe.
 */
public interface RebalanceClient
{
    /**
     * @param transferTimeout how long the leader may spend on the transfer; {@code timeout} bounds the whole request
     *                        and should exceed it.
     */
    CompletableFuture<RebalanceAnswer> rebalance(int brokerId, int partitionId, Duration transferTimeout, Duration timeout);

    /** A leader's answer: where the leadership is now; {@code reason} is null when it is on the preferred broker. */
    record RebalanceAnswer(int partitionId, int preferredBrokerId, int leaderId, String reason)
    {
    }
}
