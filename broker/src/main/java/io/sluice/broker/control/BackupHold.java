package io.sluice.broker.control;

/**
 * A backup's hold on acknowledgements (issue 26), kept in the control group apart from the operators' exporting
 * states: while it is in place every partition's exporters keep exporting but acknowledge nothing (as a soft pause
 * does), whatever an operator pauses or resumes meanwhile. Times are the proposing broker's clock in epoch
 * microseconds, carried in the entry, so every replica holds the same ones.
 *
 * @param expiresAtMicros when the hold's lease ends it by itself.
 */
public record BackupHold(long backupId, long sinceMicros, long expiresAtMicros)
{
    public BackupHold
    {
        if (backupId < 1)
        {
            throw new IllegalArgumentException("a backup hold needs a positive backup id, was " + backupId);
        }
    }

    /** Whether the lease ran out at {@code nowMicros}. */
    public boolean leaseRanOut(final long nowMicros)
    {
        return expiresAtMicros <= nowMicros;
    }

    /** What a backup hold entry did ({@code BackupHoldResult}), with the hold in place after it (null: none). */
    public enum Outcome
    {
        TAKEN, CONFLICT, RELEASED, NOT_HELD
    }

    /** A backup hold entry's reply. */
    public record Reply(Outcome outcome, BackupHold held)
    {
    }
}
