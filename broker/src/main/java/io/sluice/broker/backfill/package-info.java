/**
 * Reset to latest and backfill, broker side. {@link io.sluice.broker.backfill.PartitionBackfills} bundles the
 * parts, one per partition replica:
 * <ul>
 *   <li>{@link io.sluice.broker.backfill.BackfillCommandHandler} answers the gateway's backfill requests (start with
 *   a reset to latest, status, cancel) on the partition's leader, validating everything before it proposes. A start
 *   names the exporter's claim in the cluster control group, which the command API checks first
 *   ({@link io.sluice.broker.control.BackfillClaims#registrationRefusal}): one reset of an exporter at a time across
 *   every partition and gateway is the control group's rule, the registry's per-partition refusal its backstop.</li>
 *   <li>{@link io.sluice.broker.backfill.BackfillRegistry} is the replicated backfill state: registrations, task
 *   checkpoints and terminal states, changed only by applying backfill log entries (SBE messages of the broker log
 *   schema, {@link io.sluice.broker.backfill.BackfillMessages}), idempotent on replay, carried in the partition
 *   snapshot. A
 *   registration moves the exporter's position to the latest in the same apply, so the reset and the record of
 *   the skipped range commit together.</li>
 *   <li>{@link io.sluice.broker.backfill.BackfillSupervisor} runs one {@link io.sluice.broker.backfill.BackfillTaskRunner}
 *   per unfinished task while this replica leads, each with its own exporter instance, reading through
 *   {@link io.sluice.broker.backfill.RecordLogBackfillSource}; a task restarts from its checkpoint after a leader
 *   change or a restart, and stops when cancelled or when leadership is lost.</li>
 *   <li>{@link io.sluice.broker.backfill.ExportingSwitch} keeps runners to the partition's exporting state: nothing
 *   is exported once a pause is applied; a soft pause withholds checkpoints.</li>
 * </ul>
 * The log keeps the skipped range until every task covering it is done: the partition's compaction floor is the
 * lower of the exporters' and the backfills' floors.
 */
package io.sluice.broker.backfill;
