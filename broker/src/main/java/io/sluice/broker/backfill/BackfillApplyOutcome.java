package io.sluice.broker.backfill;

/**
 * What applying one backfill entry did. Deterministic: every replica gets the same outcome for the same
 * entry on the same state. Only {@link #APPLIED} changed the state. Codes are stable.
 */
public enum BackfillApplyOutcome
{
    /** The state changed. */
    APPLIED(0),
    /** The entry was already applied (a registration retried with the same backfill id): nothing changed. */
    DUPLICATE(1),
    /** A backfill of the same exporter on this partition is unfinished: the registration was refused. */
    CONFLICT(2),
    /** No such task or backfill on this partition. */
    UNKNOWN(3),
    /** The task is already in a terminal state, or the transition is not allowed from its state. */
    INVALID_TRANSITION(4),
    /** A value out of range (task count, checkpoint outside the range). */
    INVALID_ARGUMENT(5);

    private final int code;

    BackfillApplyOutcome(final int code)
    {
        this.code = code;
    }

    public int code()
    {
        return code;
    }
}
