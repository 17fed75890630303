package io.sluice.broker.leadership;

/** Where a partition's leadership is after a rebalance; {@code reason} is null exactly when it is on the preferred broker. */
public record RebalanceOutcome(int partitionId, int preferredBrokerId, int leaderId, String reason)
{
}
