package io.sluice.broker.backfill;

import java.util.concurrent.CompletableFuture;

/**
 * Proposes a backfill entry to the partition's Raft group (the state machine wraps it in its own log entry
 * type). The future completes once the entry is committed and applied on this replica, and fails when this
 * replica is not (or no longer) the leader.
 */
@FunctionalInterface
public interface BackfillReplicator
{
    CompletableFuture<?> replicate(BackfillEntry entry);
}
