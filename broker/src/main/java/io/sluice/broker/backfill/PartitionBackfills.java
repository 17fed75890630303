package io.sluice.broker.backfill;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * Everything backfill of one partition replica, behind the calls its state machine and command API make:
 * the replicated {@link BackfillRegistry} (apply, snapshot, compaction floor), the leader's
 * {@link BackfillSupervisor} and the {@link BackfillCommandHandler}.
 * <p>
 * The registration is applied here in full: the range is computed from the partition's state at apply time
 * and the exporter's position is moved in the same apply, after the tasks exist; so a reset is never
 * visible without its backfill, and a crash before the entry is applied leaves the old state.
 * <p>
 * Thread-safety: {@link #apply} and the snapshot calls on the state machine's apply thread; the rest from any.
 */
public final class PartitionBackfills implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(PartitionBackfills.class);

    /** What the backfill apply path reads and changes of the partition's replicated state. */
    public interface StateView
    {
        Set<String> exporterIds();

        /** The exporter's acknowledged position (0 when nothing was acknowledged yet). */
        long exporterPosition(String exporterId);

        /** The last committed record position applied so far. */
        long lastPosition();

        /** Moves the exporter's acknowledged position forward to {@code position}, within the apply in progress. */
        void advanceExporterPosition(String exporterId, long position);
    }

    private final int brokerId;
    private final int partitionId;
    private final StateView state;
    private final BackfillRegistry registry = new BackfillRegistry();
    private final BackfillSupervisor supervisor;
    private final BackfillCommandHandler handler;

    /**
     * @param replicator      proposes entries as log entries of the broker log schema
     *                        ({@link BackfillMessages#encode(BackfillEntry)}); completes once applied on this replica.
     * @param gate            the partition's export gate (in a broker, {@code partition.ExportingView#backfillSwitch}).
     * @param exportingPaused whether exporting is (hard) paused now, for reporting tasks PENDING.
     */
    public PartitionBackfills(
        final int brokerId,
        final int partitionId,
        final StateView state,
        final BackfillRecordSource source,
        final BackfillExporterFactory exporters,
        final BackfillReplicator replicator,
        final ExportingSwitch gate,
        final BooleanSupplier exportingPaused,
        final BackfillRunnerConfig config,
        final Clock clock)
    {
        this.brokerId = brokerId;
        this.partitionId = partitionId;
        this.state = state;
        this.supervisor = new BackfillSupervisor(partitionId, registry, source, exporters, replicator, gate, config, clock);
        this.handler = new BackfillCommandHandler(
            brokerId, partitionId, registry, state.exporterIds(), state::lastPosition, replicator, exportingPaused, clock);
    }

    public BackfillRegistry registry()
    {
        return registry;
    }

    /** Serves BackfillRequest, BackfillStatusRequest and CancelBackfillRequest on the leader. */
    public BackfillCommandHandler handler()
    {
        return handler;
    }

    public BackfillSupervisor supervisor()
    {
        return supervisor;
    }

    /**
     * Applies one backfill log entry (message header and message: what the replicator proposed). Deterministic.
     * Bad bytes throw
     * {@link BackfillCodecException} and change nothing.
     */
    public BackfillApplyOutcome apply(final DirectBuffer buffer, final int offset, final int length)
    {
        return apply(BackfillMessages.decodeEntry(buffer, offset, length));
    }

    public BackfillApplyOutcome apply(final BackfillEntry entry)
    {
        if (entry instanceof BackfillEntry.Register register)
        {
            if (!state.exporterIds().contains(register.exporterId()))
            {
                LOG.warn("partition {} on broker {}: backfill {} names unknown exporter {}: ignored",
                    partitionId, brokerId, register.backfillId(), register.exporterId());
                return BackfillApplyOutcome.INVALID_ARGUMENT;
            }
            final long latest = register.latestPosition() == BackfillEntry.Register.LATEST_AT_APPLY ?
                state.lastPosition() : register.latestPosition();
            final BackfillRegistry.Registration registration = registry.register(
                register, state.exporterPosition(register.exporterId()), latest);
            if (registration.outcome() == BackfillApplyOutcome.APPLIED)
            {
                state.advanceExporterPosition(register.exporterId(), registration.newExporterPosition());
                LOG.info("partition {} on broker {}: exporter {} reset to {}; backfill {} {}", partitionId, brokerId,
                    register.exporterId(), registration.newExporterPosition(), register.backfillId(),
                    registration.message());
            }
            return registration.outcome();
        }
        return registry.apply(entry);
    }

    /** Lowest position an unfinished backfill task still needs ({@link Long#MAX_VALUE} for none). */
    public long compactionFloor()
    {
        return registry.compactionFloor();
    }

    public int writeSnapshot(final MutableDirectBuffer buffer, final int offset)
    {
        return registry.writeSnapshot(buffer, offset);
    }

    public void readSnapshot(final DirectBuffer buffer, final int offset, final int length)
    {
        registry.readSnapshot(buffer, offset, length);
    }

    /** Call once the new leader has applied everything committed before its term (like the exporters). */
    public void onBecomeLeader()
    {
        supervisor.onBecomeLeader();
    }

    public void onLeadershipLost()
    {
        supervisor.onLeadershipLost();
    }

    @Override
    public void close()
    {
        supervisor.close();
    }
}
