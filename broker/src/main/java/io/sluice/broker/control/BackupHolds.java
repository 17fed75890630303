package io.sluice.broker.control;

import io.sluice.broker.errors.PartitionException;
import io.sluice.broker.log.codecs.BackupHoldActionCode;
import io.sluice.broker.log.codecs.BackupHoldOutcomeCode;
import io.sluice.broker.log.codecs.BackupHoldResultDecoder;
import io.sluice.broker.log.codecs.BackupHoldResultEncoder;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.broker.partition.Partition;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportingState;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A backup's hold on acknowledgements on this broker (issue 26), behind the command API: taken and released through
 * the control group ({@code BackupHoldEntry}, one hold at a time cluster-wide, with a lease the control group's leader
 * ends like a pause's: {@link ControlGroup}), and the wait until a pair's exporters here obey it: the same wait a
 * soft pause's answer makes, so once every pair answered no exporter position moves until the hold ends. The hold is
 * the control group's own state, never an operator's exporting stamp, so an operator's pause or resume during it is
 * kept and does not end it. Every wait is bounded by the admin timeout. Thread-safe.
 */
public final class BackupHolds
{
    private final int brokerId;
    private final ControlGroup control;
    private final Map<Integer, Partition> partitions;
    private final ControlWaits waits;

    public BackupHolds(final int brokerId, final ControlGroup control, final Map<Integer, Partition> partitions,
        final Duration timeout)
    {
        this.brokerId = brokerId;
        this.control = control;
        this.partitions = partitions;
        this.waits = new ControlWaits(brokerId, control, timeout, "not in place");
    }

    /**
     * Takes backup {@code backupId}'s hold with a lease of {@code leaseMillis}; completes with the hold once this
     * replica applied it, or fails with a {@link PartitionException}: CONFLICT (another backup's hold is in place),
     * TIMEOUT or UNAVAILABLE (the control group did not commit it in time, or could not be reached).
     */
    public CompletableFuture<BackupHold> take(final long backupId, final long leaseMillis)
    {
        return commit(backupId, BackupHoldActionCode.TAKE, TimeUnit.MILLISECONDS.toMicros(leaseMillis))
            .thenApply((reply) ->
            {
                if (reply.outcome() != BackupHold.Outcome.TAKEN)
                {
                    final BackupHold held = reply.held();
                    throw new PartitionException(ErrorCode.CONFLICT, 0, -1, "another backup's cut is in progress: " +
                        (held == null ? "a hold is in place" : "backup " + held.backupId() + " holds acknowledgements " +
                        "until " + java.time.Instant.EPOCH.plusNanos(held.expiresAtMicros() * 1000) + " at the latest"));
                }
                return reply.held();
            });
    }

    /** Releases backup {@code backupId}'s hold if it is still in place; completes with the hold in place after it. */
    public CompletableFuture<BackupHold> release(final long backupId)
    {
        return commit(backupId, BackupHoldActionCode.RELEASE, 0).thenApply(BackupHold.Reply::held);
    }

    /**
     * Completes once this broker's replica holds backup {@code backupId}'s hold and the exporters of
     * {@code partitionId} here obey it (an export in flight passed the gate, positions proposed before are committed);
     * fails with TIMEOUT when that does not happen within the admin timeout (the hold ended, or no control quorum).
     */
    public CompletableFuture<BackupHold> obeyed(final int partitionId, final long backupId)
    {
        final Partition partition = partitions.get(partitionId);
        if (partition == null)
        {
            return CompletableFuture.failedFuture(new PartitionException(ErrorCode.NOT_MEMBER, partitionId, -1,
                "partition " + partitionId + " is not replicated on broker " + brokerId));
        }
        return waits.bounded(control.state().awaitBackupHold(backupId)
            .thenCompose((hold) -> partition.exporting().awaitObeyed(ExportingState.SOFT_PAUSED).thenApply((v) -> hold)),
            "partition " + partitionId + " on broker " + brokerId + ": the hold of backup " + backupId);
    }

    /** Whether this broker's replica holds backup {@code backupId}'s hold now. */
    public boolean holds(final long backupId)
    {
        final BackupHold held = control.state().backupHold();
        return held != null && held.backupId() == backupId;
    }

    public BackupHold held()
    {
        return control.state().backupHold();
    }

    private CompletableFuture<BackupHold.Reply> commit(
        final long backupId, final BackupHoldActionCode action, final long leaseMicros)
    {
        if (backupId < 1)
        {
            return CompletableFuture.failedFuture(new PartitionException(ErrorCode.INVALID_ARGUMENT, 0, -1,
                "broker " + brokerId + ": a backup id is positive, was " + backupId));
        }
        return waits.commit(ControlEntries.backupHold(backupId, action, leaseMicros, brokerId, control.nowMicros()),
                BackupHolds::decodeResult, action + " of backup " + backupId + "'s hold")
            .thenApply(ControlWaits.Applied::reply);
    }

    static byte[] encodeResult(final BackupHold.Reply reply)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);
        final BackupHold held = reply.held();
        final BackupHoldResultEncoder encoder = new BackupHoldResultEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .outcome(BackupHoldOutcomeCode.valueOf(reply.outcome().name()))
            .heldBackupId(held == null ? 0 : held.backupId())
            .sinceMicros(held == null ? 0 : held.sinceMicros())
            .expiresAtMicros(held == null ? 0 : held.expiresAtMicros());
        return Arrays.copyOf(buffer.byteArray(), MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    static BackupHold.Reply decodeResult(final UnsafeBuffer bytes) throws IOException
    {
        if (bytes.capacity() < MessageHeaderDecoder.ENCODED_LENGTH + BackupHoldResultDecoder.BLOCK_LENGTH)
        {
            throw new IOException("backup hold result of " + bytes.capacity() + " bytes");
        }
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(bytes, 0);
        if (header.schemaId() != MessageHeaderDecoder.SCHEMA_ID ||
            header.templateId() != BackupHoldResultDecoder.TEMPLATE_ID ||
            header.blockLength() < BackupHoldResultDecoder.BLOCK_LENGTH)
        {
            throw new IOException("not a backup hold result: template " + header.templateId());
        }
        final BackupHoldResultDecoder result = new BackupHoldResultDecoder()
            .wrap(bytes, header.encodedLength(), header.blockLength(), header.version());
        final BackupHold.Outcome outcome = switch (result.outcome())
        {
            case TAKEN, CONFLICT, RELEASED, NOT_HELD -> BackupHold.Outcome.valueOf(result.outcome().name());
            default -> throw new IOException("backup hold result has outcome " + result.outcomeRaw());
        };
        final long held = result.heldBackupId();
        return new BackupHold.Reply(outcome, held > 0 ? new BackupHold(held, result.sinceMicros(),
            result.expiresAtMicros()) : null);
    }
}
