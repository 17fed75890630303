/**
 * Where a partition replica's leadership goes: Ratis leadership transfers and the guard against Ratis 3.2's stuck
 * step-down ({@link io.sluice.broker.leadership.LeadershipTransfer}), whom it can go to
 * ({@link io.sluice.broker.leadership.FollowerSync}), and the hold that keeps the replica's own proposals out of a
 * transfer's way ({@link io.sluice.broker.leadership.LocalWrites}). It serves the replica through
 * {@link io.sluice.broker.leadership.Replica}; the broker-wide balance and the controlled shutdown are the broker's
 * {@code LeaderBalancer}.
 */
package io.sluice.broker.leadership;
