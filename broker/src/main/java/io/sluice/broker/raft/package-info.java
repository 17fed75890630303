/**
 * The broker's member-side seam over Ratis, the lowest of the broker's packages (it imports none of them): one
 * {@link io.sluice.broker.raft.GroupMember} for each Raft group a broker serves (every partition's and the control
 * group's), the names of peers and groups ({@link io.sluice.broker.raft.RaftPeers}), the Raft client to a group's
 * leader, what the state machines share ({@link io.sluice.broker.raft.ReplicatedStateAdapter}, snapshot files), and
 * the one loop that retries leadership transfers ({@link io.sluice.broker.raft.TransferRetries}).
 * <p>
 * The broker's packages import only downward: {@code raft}, {@code errors}, {@code append}, {@code exporting},
 * {@code leadership}, {@code partition}, {@code control}, {@code backup}, {@code command}, then the broker itself; {@code log},
 * {@code disk}, {@code exporter} and {@code backfill} sit below {@code append} and {@code exporting}.
 */
package io.sluice.broker.raft;
