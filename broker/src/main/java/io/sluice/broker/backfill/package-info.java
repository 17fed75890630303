/**
 * Reset to latest and backfill (issue 6), broker side: self-contained parts that the partition's state machine,
 * the {@code Partition} and the command API wire in. {@link io.sluice.broker.backfill.PartitionBackfills} bundles
 * them; one per partition replica.
 * <p>
 * Wiring (owner of {@code io.sluice.broker.partition} / {@code command}):
 * <ol>
 *   <li><b>Log entry.</b> Add a message to {@code broker-log-codecs.xml}, {@code BackfillEntry} (id 24, wired) with
 *   one {@code varDataEncoding} field {@code payload}. The replicator given to {@code PartitionBackfills} wraps
 *   {@link io.sluice.broker.backfill.BackfillCodec#encode(io.sluice.broker.backfill.BackfillEntry)} in it, submits
 *   it in-process on the leader ({@code submitLocal}) and completes with {@code awaitApplied(reply index)}; it fails
 *   when the reply is not a success (not leader).</li>
 *   <li><b>Apply.</b> In {@code PartitionState.apply}, the new template calls
 *   {@code backfills.apply(payload)}. {@code PartitionBackfills.PartitionState} is the partition's state itself:
 *   {@code exporterIds()}, {@code exporterPosition(id)}, {@code lastPosition()} = the record log's last position,
 *   and {@code advanceExporterPosition(id, p)} = {@code exporterPositions.merge(id, p, Math::max)} (under the
 *   export gate, like a state change). The registration and the position move happen in that one apply: atomic
 *   and deterministic on every replica. Entries are idempotent on replay (a registration of a known backfill id is
 *   DUPLICATE; checkpoints only move forward; transitions from terminal states are refused).
 *   {@code BackfillCodecException} on bad bytes: log and skip the entry (nothing changed).</li>
 *   <li><b>Snapshot.</b> Write {@code backfills.writeSnapshot(..)} into the snapshot (a new var-data field of
 *   {@code PartitionSnapshot}, or a second file in the snapshot's file list) and {@code readSnapshot(..)} in
 *   {@code PartitionState.restore(..)}; an absent field means no backfills.</li>
 *   <li><b>Compaction.</b> {@code PartitionState.compactionFloor()} must return
 *   {@code min(exporters' floor, backfills.compactionFloor())}: after a reset the exporter's position jumps to the
 *   end, and only the backfill floor keeps the skipped range on disk until its tasks are done.</li>
 *   <li><b>Leadership.</b> Where the exporter director starts ({@code onLeaderReady}, after {@code awaitApplied} of
 *   the commit index) call {@code backfills.onBecomeLeader()}; where it stops ({@code onLeaderChanged}, close) call
 *   {@code onLeadershipLost()} / {@code close()}.</li>
 *   <li><b>Pause.</b> Build the gate with
 *   {@link io.sluice.broker.backfill.BackfillExportGate#underLock}{@code (stateMachine.exportGate(),
 *   stateMachine::exportingState)}: runners export a batch only holding that lock after seeing a state other than
 *   PAUSED, and the state machine applies a pause holding it, so after a pause is applied no backfill record is
 *   exported (the regular exporters' guarantee). Soft pause: runners keep exporting but withhold checkpoints.
 *   {@code exportingPaused} for status answers: {@code () -> stateMachine.exportingState() == PAUSED}.</li>
 *   <li><b>Command API.</b> For templates 8, 9, 10 ({@link io.sluice.broker.backfill.BackfillCommandHandler#handles})
 *   on the partition's leader call {@code backfills.handler().onRequest(buffer, offset, length, response)};
 *   on a follower answer NOT_LEADER with the known leader, as for appends.</li>
 *   <li><b>Regular exporter after a reset.</b> The director's containers keep their own next position: before each
 *   read they should jump to {@code max(nextPosition, stateMachine.exporterPosition(id) + 1)}, so fresh records
 *   flow at once instead of the director re-exporting the range the backfill covers.</li>
 *   <li><b>Exporters.</b> {@link io.sluice.broker.backfill.SpiBackfillExporterFactory} over the broker's
 *   {@code ExporterRegistry}, configs and data dir; {@link io.sluice.broker.backfill.RecordLogBackfillSource} over
 *   {@code stateMachine::recordLog}.</li>
 * </ol>
 */
package io.sluice.broker.backfill;
