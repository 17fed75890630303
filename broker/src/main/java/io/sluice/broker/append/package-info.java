/**
 * The append path of a partition: client batches and their ids ({@link io.sluice.broker.append.AppendEntries}),
 * their coalescing into Raft entries ({@link io.sluice.broker.append.AppendBatcher}), the remembered append ids
 * ({@link io.sluice.broker.append.AppendIdempotency}), and the entries' apply into the record log
 * ({@link io.sluice.broker.append.AppendApplier}), with the replies it answers the proposer
 * ({@link io.sluice.broker.append.AppendReplies}).
 */
package io.sluice.broker.append;
