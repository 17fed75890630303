package io.sluice.broker.backfill;

/**
 * Life cycle of one backfill task. Codes are stable: they are written to log entries and snapshots, and
 * equal the codes of {@code io.sluice.protocol.codecs.BackfillState} so the wire mapping is by code.
 * <pre>
 *   PENDING --attempt started--> RUNNING --checkpoint--> RUNNING
 *   RUNNING --attempt failed (retry)--> PENDING
 *   RUNNING --reached its last position--> SUCCEEDED
 *   PENDING | RUNNING --attempts exhausted--> FAILED
 *   PENDING | RUNNING --cancel--> CANCELLED
 * </pre>
 * Terminal states never change again.
 */
public enum BackfillTaskState
{
    PENDING(0),
    RUNNING(1),
    SUCCEEDED(2),
    FAILED(3),
    CANCELLED(4);

    private static final BackfillTaskState[] BY_CODE = {PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED};

    private final int code;

    BackfillTaskState(final int code)
    {
        this.code = code;
    }

    public int code()
    {
        return code;
    }

    public boolean isTerminal()
    {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED;
    }

    /** @throws IllegalArgumentException for a code no state has. */
    public static BackfillTaskState fromCode(final int code)
    {
        if (code < 0 || code >= BY_CODE.length)
        {
            throw new IllegalArgumentException("unknown backfill task state code " + code);
        }
        return BY_CODE[code];
    }
}
