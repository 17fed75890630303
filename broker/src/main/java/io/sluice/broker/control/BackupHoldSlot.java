package io.sluice.broker.control;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The control state's one backup hold (issue 26): which backup holds every exporter's acknowledgements, until when,
 * and who waits for a backup's hold to be in place on this replica. Its own state, never an operator's exporting stamp,
 * so a resume during a backup does not end the hold and the operator's pause is still in place after it.
 * <p>
 * When a transition changed the hold, {@link ControlState} tells every partition (their exporters' state changed with
 * it) and then completes the waiters. Thread-safety as {@link ControlState}: transitions on the apply thread, reads and waits from
 * any thread.
 */
final class BackupHoldSlot
{
    private static final Logger LOG = LoggerFactory.getLogger(BackupHoldSlot.class);

    private final int brokerId;
    private volatile BackupHold held;
    private final Queue<Waiter> waiters = new ConcurrentLinkedQueue<>();

    BackupHoldSlot(final int brokerId)
    {
        this.brokerId = brokerId;
    }

    /**
     * TAKE puts backup {@code backupId}'s hold in place unless another backup's hold is, whose lease has not run out by
     * the entry's own time {@code atMicros} (deterministic: both times are in the log); the same backup's TAKE again
     * changes nothing.
     */
    BackupHold.Reply take(final long index, final long backupId, final long atMicros, final long leaseMicros,
        final int proposer)
    {
        final BackupHold hold = held;
        if (hold != null && hold.backupId() == backupId)
        {
            return new BackupHold.Reply(BackupHold.Outcome.TAKEN, hold);
        }
        if (backupId < 1 || (hold != null && !hold.leaseRanOut(atMicros)))
        {
            LOG.info("broker {}: control entry {}: hold of backup {} refused, backup {} holds until {}", brokerId,
                index, backupId, hold == null ? 0 : hold.backupId(), hold == null ? "-" : instant(hold.expiresAtMicros()));
            return new BackupHold.Reply(BackupHold.Outcome.CONFLICT, hold);
        }
        final BackupHold taken = new BackupHold(backupId, atMicros, atMicros + Math.max(0, leaseMicros));
        set(taken);
        LOG.info("broker {}: acknowledgements held for backup {} (control entry {}, proposed by broker {}), lease " +
            "ends at {}", brokerId, backupId, index, proposer, instant(taken.expiresAtMicros()));
        return new BackupHold.Reply(BackupHold.Outcome.TAKEN, taken);
    }

    /** RELEASE ends the hold only if it is backup {@code backupId}'s. */
    BackupHold.Reply release(final long index, final long backupId, final long atMicros)
    {
        final BackupHold hold = held;
        if (hold == null || hold.backupId() != backupId)
        {
            return new BackupHold.Reply(BackupHold.Outcome.NOT_HELD, hold);
        }
        set(null);
        LOG.info("broker {}: hold of backup {} released after {} ms (control entry {})", brokerId, backupId,
            Math.max(0, atMicros - hold.sinceMicros()) / 1000, index);
        return new BackupHold.Reply(BackupHold.Outcome.RELEASED, null);
    }

    /** A lease expiry naming backup {@code backupId} ends its hold if it is still the one in place; true if it did. */
    boolean expire(final long index, final long backupId, final int proposer)
    {
        final BackupHold hold = held;
        if (backupId <= 0 || hold == null || hold.backupId() != backupId)
        {
            return false;
        }
        set(null);
        LOG.warn("broker {}: the hold of backup {} (since {}) ran out of its lease: acknowledgements flow again{}",
            brokerId, backupId, instant(hold.sinceMicros()),
            proposer == brokerId ? "; the backup fails" : " (control entry " + index + ")");
        return true;
    }

    /** Replaces the hold with a snapshot's (null: none). */
    void restore(final BackupHold hold)
    {
        set(hold);
    }

    /** The hold in place, or null. */
    BackupHold held()
    {
        return held;
    }

    /** The backup whose hold's lease ran out at {@code nowMicros}, or 0. */
    long expiredAt(final long nowMicros)
    {
        final BackupHold hold = held;
        return hold != null && hold.leaseRanOut(nowMicros) ? hold.backupId() : 0;
    }

    /** Completes once this replica holds backup {@code backupId}'s hold (at once if it does); the caller bounds the wait. */
    CompletableFuture<BackupHold> await(final long backupId)
    {
        final BackupHold hold = held;
        if (hold != null && hold.backupId() == backupId)
        {
            return CompletableFuture.completedFuture(hold);
        }
        final Waiter waiter = new Waiter(backupId, new CompletableFuture<>());
        waiters.add(waiter);
        waiter.future.whenComplete((h, error) -> waiters.remove(waiter));
        // The hold may have been set between the check above and the add: look again.
        final BackupHold now = held;
        if (now != null && now.backupId() == backupId)
        {
            waiter.future.complete(now);
        }
        return waiter.future;
    }

    private void set(final BackupHold hold)
    {
        held = hold;
    }

    /**
     * Completes the waiters of the hold in place; called by {@link ControlState} once every partition was told, so a
     * waiter goes on only when the exporters obey the hold.
     */
    void completeWaiters()
    {
        final BackupHold hold = held;
        if (hold == null)
        {
            return;
        }
        for (final Waiter waiter : waiters)
        {
            if (waiter.backupId == hold.backupId())
            {
                waiter.future.complete(hold);
            }
        }
    }

    private static Instant instant(final long micros)
    {
        return Instant.EPOCH.plusNanos(micros * 1000);
    }

    private record Waiter(long backupId, CompletableFuture<BackupHold> future)
    {
    }
}
