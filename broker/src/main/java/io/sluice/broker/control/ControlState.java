package io.sluice.broker.control;

import io.sluice.broker.log.codecs.BackfillClaimEntryDecoder;
import io.sluice.broker.log.codecs.BackupHoldEntryDecoder;
import io.sluice.broker.log.codecs.BooleanType;
import io.sluice.broker.log.codecs.ControlBarrierEntryDecoder;
import io.sluice.broker.log.codecs.ExportingChangeEntryDecoder;
import io.sluice.broker.log.codecs.ExportingLeaseExpiryEntryDecoder;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.ExportingState;
import org.agrona.DirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The cluster control group's replicated state, without Raft: every partition's exporting state with the version
 * of the operation that set it, and every exporter's backfill claim with the latest empty backfills
 * ({@link BackfillClaimTable}). Every broker holds a replica (the group's voters and its listeners alike) and applies
 * the same committed entries in the same order through {@link #apply}, so every replica holds the same state once it
 * applied the same entries. A partition takes an operation only if its version is newer than the one it holds, so a
 * late pause cannot undo a newer resume, and the same operation committed twice changes nothing.
 * {@link ControlStateMachine} adapts it to Ratis; an entry whose proposer waits for an answer (a claim) gets it as the
 * apply's reply.
 * <p>
 * Thread-safety: {@link #apply} and {@link #restore} on one thread (Ratis's apply thread); reads and waits from any
 * thread.
 * <p>
 * Why a little over 450 lines: it is the control group's one apply path (one dispatch over its four entry kinds:
 * exporting changes, lease expiries, backup holds, backfill claims) and its snapshot mirror, and the waits for an
 * applied version read the same state; the claims' table is {@link BackfillClaimTable}'s.
 */
public final class ControlState
{
    /** What the state tells its broker while applying; called on the apply thread: must not block. */
    public interface Listener
    {
        /** The exporting state of the partition changed. */
        void onExportingChanged(int partitionId);
    }

    private static final Logger CLASS_LOG = LoggerFactory.getLogger(ControlState.class);

    /** Where the state's changes are told: its class's logger, except on a warm-up's scratch state. */
    private final Logger log;

    private final int brokerId;
    private final int partitionCount;
    private final Listener listener;
    /** Index: partition id (1..partitionCount); index 0 is unused. */
    private final AtomicReferenceArray<ExportingStamp> stamps;
    private final BackfillClaimTable backfillClaims = new BackfillClaimTable();
    private final Queue<VersionWaiter> waiters = new ConcurrentLinkedQueue<>();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final ExportingChangeEntryDecoder changeDecoder = new ExportingChangeEntryDecoder();
    private final ExportingLeaseExpiryEntryDecoder expiryDecoder = new ExportingLeaseExpiryEntryDecoder();
    private final BackupHoldEntryDecoder backupHoldDecoder = new BackupHoldEntryDecoder();
    private final BackupHoldSlot backupHold;
    /** Lease expiry entries that ended at least one hold, since the cluster began (replicated: every replica agrees). */
    private volatile long leaseExpiries;
    /** Exporting operations applied since this replica started, duplicates included (what a pause cost the group). */
    private volatile long exportingChangesApplied;

    public ControlState(final int brokerId, final int partitionCount, final Listener listener)
    {
        this(brokerId, partitionCount, listener, CLASS_LOG);
    }

    /** A state that tells its changes to {@code log} ({@link ApplyPathWarmUp}'s scratch state tells nobody). */
    ControlState(final int brokerId, final int partitionCount, final Listener listener, final Logger log)
    {
        this.log = log;
        this.brokerId = brokerId;
        this.partitionCount = partitionCount;
        this.listener = listener;
        this.backupHold = new BackupHoldSlot(brokerId);
        this.stamps = new AtomicReferenceArray<>(partitionCount + 1);
        clear();
    }

    // ---------------------------------------------------------------------------------------------- apply

    /**
     * Applies one committed entry, the one at Raft index {@code index}, of which {@code buffer} holds exactly the bytes.
     *
     * @return the reply for the entry's proposer (a {@code BackfillClaimResult} for a claim), or null when it gets none.
     * @throws IOException when the entry is not one of the control group's; nothing changed then.
     */
    public byte[] apply(final long index, final DirectBuffer buffer) throws IOException
    {
        if (buffer.capacity() < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            throw new IOException("control entry " + index + " has " + buffer.capacity() + " bytes");
        }
        headerDecoder.wrap(buffer, 0);
        if (headerDecoder.schemaId() != MessageHeaderDecoder.SCHEMA_ID)
        {
            throw new IOException("control entry " + index + " has schema " + headerDecoder.schemaId());
        }
        switch (headerDecoder.templateId())
        {
            case ExportingChangeEntryDecoder.TEMPLATE_ID ->
            {
                onExportingChange(index, changeDecoder.wrap(buffer, headerDecoder.encodedLength(),
                    headerDecoder.blockLength(), headerDecoder.version()));
                return null;
            }
            case ExportingLeaseExpiryEntryDecoder.TEMPLATE_ID ->
            {
                onLeaseExpiry(index, expiryDecoder.wrap(buffer, headerDecoder.encodedLength(),
                    headerDecoder.blockLength(), headerDecoder.version()));
                return null;
            }
            case BackupHoldEntryDecoder.TEMPLATE_ID ->
            {
                return BackupHolds.encodeResult(onBackupHold(index, backupHoldDecoder.wrap(buffer,
                    headerDecoder.encodedLength(), headerDecoder.blockLength(), headerDecoder.version())));
            }
            case ControlBarrierEntryDecoder.TEMPLATE_ID ->
            {
                // Changes nothing: its proposer only waits until it is applied on its own replica.
                return null;
            }
            case BackfillClaimEntryDecoder.TEMPLATE_ID ->
            {
                return onBackfillClaim(index, ClaimCodes.decodeEntry(buffer, headerDecoder, index));
            }
            default -> throw new IOException("control entry " + index + " has unknown template " + headerDecoder.templateId());
        }
    }

    private byte[] onBackfillClaim(final long index, final BackfillClaimChange change)
    {
        final BackfillClaimReply reply = backfillClaims.apply(change, index);
        log.info("broker {}: control entry {}: {} of exporter {} by backfill {} (proposed by broker {}): {}: {}", brokerId,
            index, change.action(), change.exporterId(), change.backfillId(), change.proposerBrokerId(), reply.outcome(),
            reply.reason());
        return ClaimCodes.encodeResult(reply);
    }

    private void onExportingChange(final long index, final ExportingChangeEntryDecoder entry)
    {
        exportingChangesApplied++;
        final long version = entry.version();
        final ExportingState state;
        try
        {
            state = ExportingStamp.toExportingState(entry.state());
        }
        catch (final IllegalArgumentException e)
        {
            log.warn("broker {}: control entry {} skipped: {}", brokerId, index, e.getMessage());
            return;
        }
        final int proposer = entry.proposerBrokerId();
        // Absent before schema version 5 (the null value): no time known, no lease.
        final long sinceMicros = Math.max(0, entry.timestampMicros());
        final long leaseMicros = state == ExportingState.EXPORTING ? 0 : Math.max(0, entry.leaseMicros());
        final ExportingStamp stamp = new ExportingStamp(state, version, sinceMicros,
            leaseMicros > 0 ? sinceMicros + leaseMicros : 0, 0);
        int changed = 0;
        int covered = 0;
        if (entry.allPartitions() == BooleanType.TRUE)
        {
            for (int p = 1; p <= partitionCount; p++)
            {
                covered++;
                changed += take(p, stamp) ? 1 : 0;
            }
        }
        else
        {
            for (final ExportingChangeEntryDecoder.PartitionsDecoder listed : entry.partitions())
            {
                final int p = listed.partitionId();
                if (p < 1 || p > partitionCount)
                {
                    log.warn("broker {}: control entry {} names partition {}, not one of 1..{}: skipped", brokerId, index,
                        p, partitionCount);
                    continue;
                }
                covered++;
                changed += take(p, stamp) ? 1 : 0;
            }
        }
        if (changed > 0)
        {
            log.info("broker {}: exporting is now {} (version {}{}) on {} of {} partitions, proposed by broker {}", brokerId,
                state, version, leaseMicros > 0 ? ", lease ends at " + java.time.Instant.EPOCH.plusNanos(
                stamp.expiresAtMicros() * 1000) : "", changed, covered, proposer);
        }
        else
        {
            // The same operation proposed by more than one broker, or one older than what every partition holds.
            log.debug("broker {}: exporting {} version {} changed none of {} partitions", brokerId, state, version, covered);
        }
        completeWaiters();
    }

    /**
     * Ends each listed partition's hold if it still holds that version with a lease (a later pause or resume, or the
     * same expiry applied before, leaves it as it is). Only the proposer logs it, at WARN: one line for the cluster.
     */
    private void onLeaseExpiry(final long index, final ExportingLeaseExpiryEntryDecoder entry)
    {
        final long atMicros = entry.timestampMicros();
        final int proposer = entry.proposerBrokerId();
        // Absent before schema version 6 (the null value): no backup hold named.
        if (backupHold.expire(index, entry.backupId(), proposer))
        {
            backupHoldChanged();
        }
        final StringBuilder ended = new StringBuilder();
        int changed = 0;
        for (final ExportingLeaseExpiryEntryDecoder.PartitionsDecoder listed : entry.partitions())
        {
            final int p = listed.partitionId();
            if (p < 1 || p > partitionCount)
            {
                log.warn("broker {}: control entry {} names partition {}, not one of 1..{}: skipped", brokerId, index, p,
                    partitionCount);
                continue;
            }
            final ExportingStamp held = stamps.get(p);
            if (held.version() != listed.version() || !held.isHeld() || held.expiresAtMicros() == 0)
            {
                continue;
            }
            stamps.set(p, held.expired(atMicros));
            listener.onExportingChanged(p);
            changed++;
            if (ended.length() < 200)
            {
                ended.append(ended.length() == 0 ? "" : ", ").append(p).append(" (").append(held.state())
                    .append(" version ").append(held.version()).append(')');
            }
        }
        if (changed > 0)
        {
            leaseExpiries++;
            if (proposer == brokerId)
            {
                log.warn("broker {}: pause lease ran out: exporting resumed by itself on {} partitions: {}", brokerId,
                    changed, ended);
            }
            else
            {
                log.info("broker {}: pause lease ran out on {} partitions (control entry {}, proposed by broker {})",
                    brokerId, changed, index, proposer);
            }
        }
        completeWaiters();
    }

    /** A backup's hold taken or released ({@link BackupHoldSlot}); every partition is told when it changed. */
    private BackupHold.Reply onBackupHold(final long index, final BackupHoldEntryDecoder entry)
    {
        final BackupHold before = backupHold.held();
        final BackupHold.Reply reply = switch (entry.action())
        {
            case TAKE -> backupHold.take(index, entry.backupId(), entry.timestampMicros(), entry.leaseMicros(),
                entry.proposerBrokerId());
            case RELEASE -> backupHold.release(index, entry.backupId(), entry.timestampMicros());
            default ->
            {
                log.warn("broker {}: control entry {} has an unknown backup hold action: skipped", brokerId, index);
                yield new BackupHold.Reply(BackupHold.Outcome.NOT_HELD, backupHold.held());
            }
        };
        if (backupHold.held() != before)
        {
            backupHoldChanged();
        }
        return reply;
    }

    /** The backup hold changed: every partition's exporters obey a new state; the apply thread only. */
    private void backupHoldChanged()
    {
        for (int p = 1; p <= partitionCount; p++)
        {
            listener.onExportingChanged(p);
        }
        backupHold.completeWaiters();
    }

    /** Takes the stamp if newer than the partition's; the apply thread only. */
    private boolean take(final int partitionId, final ExportingStamp stamp)
    {
        final ExportingStamp held = stamps.get(partitionId);
        if (stamp.version() <= held.version())
        {
            if (stamp.version() < held.version())
            {
                log.info("broker {}: partition {} ignored exporting {} version {}, holding {} version {}", brokerId,
                    partitionId, stamp.state(), stamp.version(), held.state(), held.version());
            }
            return false;
        }
        stamps.set(partitionId, stamp);
        listener.onExportingChanged(partitionId);
        return true;
    }

    // ------------------------------------------------------------------------------------------- snapshots

    /** The state as a snapshot holds it; with {@link #restore} it gives back an equal state. */
    public ControlSnapshot snapshot()
    {
        final Map<Integer, ExportingStamp> held = new TreeMap<>();
        for (int p = 1; p <= partitionCount; p++)
        {
            final ExportingStamp stamp = stamps.get(p);
            if (stamp.version() > 0)
            {
                held.put(p, stamp);
            }
        }
        return new ControlSnapshot(held, backfillClaims.claims(), backfillClaims.emptyBackfills(), leaseExpiries,
            backupHold.held());
    }

    /** Replaces the whole state with a snapshot's (null: the initial state); tells the listener of every partition. */
    public void restore(final ControlSnapshot snapshot)
    {
        clear();
        if (snapshot != null)
        {
            backfillClaims.restore(snapshot.claims(), snapshot.emptyBackfills());
            leaseExpiries = snapshot.leaseExpiries();
            backupHold.restore(snapshot.backupHold());
            snapshot.partitions().forEach((p, stamp) ->
            {
                if (p >= 1 && p <= partitionCount)
                {
                    stamps.set(p, stamp);
                }
                else
                {
                    log.warn("broker {}: control snapshot holds partition {}, not one of 1..{}: skipped", brokerId, p,
                        partitionCount);
                }
            });
        }
        for (int p = 1; p <= partitionCount; p++)
        {
            listener.onExportingChanged(p);
        }
        completeWaiters();
        backupHold.completeWaiters();
    }

    private void clear()
    {
        for (int p = 0; p <= partitionCount; p++)
        {
            stamps.set(p, ExportingStamp.INITIAL);
        }
        backfillClaims.restore(List.of(), List.of());
        leaseExpiries = 0;
        backupHold.restore(null);
    }

    // ---------------------------------------------------------------------------------------------- reads

    public int partitionCount()
    {
        return partitionCount;
    }

    /** Every exporter's backfill claim and the latest empty backfills, as this replica applied them. */
    public BackfillClaimTable backfillClaims()
    {
        return backfillClaims;
    }

    /**
     * How many exporting operation entries this replica applied since it started (snapshots and replays after a
     * restart included), duplicates of one operation counted each: one commit per operation is the aim.
     */
    public long exportingChangesApplied()
    {
        return exportingChangesApplied;
    }

    /** Lease expiry entries that ended at least one hold, since the cluster began. */
    public long leaseExpiries()
    {
        return leaseExpiries;
    }

    /** The partitions whose leased hold ran out at {@code nowMicros}, each with the version of its hold. */
    public Map<Integer, Long> expiredLeases(final long nowMicros)
    {
        final Map<Integer, Long> expired = new TreeMap<>();
        for (int p = 1; p <= partitionCount; p++)
        {
            final ExportingStamp stamp = stamps.get(p);
            if (stamp.leaseRanOut(nowMicros))
            {
                expired.put(p, stamp.version());
            }
        }
        return expired;
    }

    /** The backup hold in place, or null. */
    public BackupHold backupHold()
    {
        return backupHold.held();
    }

    /** The backup whose hold's lease ran out at {@code nowMicros}, or 0. */
    public long expiredBackupHold(final long nowMicros)
    {
        return backupHold.expiredAt(nowMicros);
    }

    /**
     * Completes once this replica holds backup {@code backupId}'s hold (at once if it does); the caller bounds the wait.
     */
    public CompletableFuture<BackupHold> awaitBackupHold(final long backupId)
    {
        return backupHold.await(backupId);
    }

    /** The partition's stamp; {@link ExportingStamp#INITIAL} for an id outside 1..partitionCount. */
    public ExportingStamp stamp(final int partitionId)
    {
        return partitionId >= 1 && partitionId <= partitionCount ? stamps.get(partitionId) : ExportingStamp.INITIAL;
    }

    /**
     * Completes once the partition holds a version of at least {@code version} (at once if it does); the caller bounds
     * the wait (a waiter that timed out is dropped when it completes).
     */
    public CompletableFuture<ExportingStamp> awaitVersion(final int partitionId, final long version)
    {
        final ExportingStamp held = stamp(partitionId);
        if (held.version() >= version)
        {
            return CompletableFuture.completedFuture(held);
        }
        final VersionWaiter waiter = new VersionWaiter(partitionId, version);
        waiters.add(waiter);
        waiter.future.whenComplete((stamp, error) -> waiters.remove(waiter));
        // Applied between the check and the registration.
        final ExportingStamp now = stamp(partitionId);
        if (now.version() >= version)
        {
            waiter.future.complete(now);
        }
        return waiter.future;
    }

    private void completeWaiters()
    {
        for (final VersionWaiter waiter : waiters)
        {
            final ExportingStamp held = stamp(waiter.partitionId);
            if (held.version() >= waiter.version)
            {
                waiter.future.complete(held);
            }
        }
    }

    private static final class VersionWaiter
    {
        final int partitionId;
        final long version;
        final CompletableFuture<ExportingStamp> future = new CompletableFuture<>();

        VersionWaiter(final int partitionId, final long version)
        {
            this.partitionId = partitionId;
            this.version = version;
        }
    }
}
