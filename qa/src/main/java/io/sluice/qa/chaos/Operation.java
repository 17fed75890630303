package io.sluice.qa.chaos;

import io.sluice.protocol.cluster.PartitionReplica;

import java.util.Map;
import java.util.Set;

/**
 * One client operation of a history: who ran it, when it was invoked and completed (milliseconds since the history
 * began, on the harness's monotonic clock; a completion of {@link Long#MAX_VALUE} means it never completed) and how it
 * ended. The kinds are the contract's operations the checker reasons about.
 */
public sealed interface Operation
{
    int id();

    int process();

    long invokedAt();

    long completedAt();

    Outcome outcome();

    /** The name in reports ({@code report.json}'s {@code operations}). */
    String kind();

    /**
     * {@code POST /v1/records} of one record with {@code Idempotency-Key: writeId} (retries of one logical append share
     * it, and its payload carries it too, so an exported line names its write). {@code partitionId}/{@code position} are
     * the answer's when {@code OK}, else -1.
     */
    record Append(int id, int process, long invokedAt, long completedAt, Outcome outcome, String writeId,
        int partitionId, long position) implements Operation
    {
        @Override
        public String kind()
        {
            return "append";
        }
    }

    /**
     * A pause, soft pause or resume on {@code targets} (the pairs it was sent for, every pair when the request named
     * none), with the pairs the answer reported {@code SUCCEEDED} and an optional lease in milliseconds (0: none).
     * {@code OK} is a 200.
     */
    record Control(int id, int process, long invokedAt, long completedAt, Outcome outcome, ControlKind action,
        Set<PartitionReplica> targets, Set<PartitionReplica> succeeded, long leaseMillis) implements Operation
    {
        @Override
        public String kind()
        {
            return action.reportName();
        }

        /** Whether it was sent to any pair of the partition (the exporting state is a partition's, CONTRACT §3). */
        public boolean touches(final int partitionId)
        {
            return targets.stream().anyMatch(pair -> pair.partitionId() == partitionId);
        }
    }

    /**
     * {@code GET /actuator/exporting}: each pair's state as shown. {@code afterHeal}: read by the harness once every
     * fault was healed and the cluster settled, for the convergence property.
     */
    record StatusRead(int id, int process, long invokedAt, long completedAt, Outcome outcome,
        Map<PartitionReplica, String> states, boolean afterHeal) implements Operation
    {
        @Override
        public String kind()
        {
            return "status";
        }
    }

    /** {@code POST .../resetToLatestAndBackfill}: {@code OK} is a 202 with {@code backfillId}. */
    record BackfillStart(int id, int process, long invokedAt, long completedAt, Outcome outcome, String backfillId)
        implements Operation
    {
        @Override
        public String kind()
        {
            return "backfill";
        }
    }

    /** {@code GET /actuator/backfills/{id}}: the state shown. */
    record BackfillRead(int id, int process, long invokedAt, long completedAt, Outcome outcome, String backfillId,
        String state) implements Operation
    {
        @Override
        public String kind()
        {
            return "backfill-status";
        }
    }
}
