/**
 * One partition replica: {@link io.sluice.broker.partition.Partition} (its Raft member, listener callbacks, append entry
 * point and status, composing the append path, the exporting and the leadership), its replicated state
 * ({@link io.sluice.broker.partition.PartitionState}, free of Ratis types) and the state machine that adapts it to
 * Ratis, with its snapshots ({@link io.sluice.broker.partition.PartitionSnapshot},
 * {@link io.sluice.broker.partition.PartitionSnapshotStore}).
 */
package io.sluice.broker.partition;
