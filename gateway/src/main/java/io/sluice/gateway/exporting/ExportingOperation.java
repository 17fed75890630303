package io.sluice.gateway.exporting;

import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.ExportingState;

/** What an operator asks of every targeted (broker, partition) pair; the names are the JSON {@code operation}. */
public enum ExportingOperation
{
    PAUSE(AdminRequestKind.PAUSE_EXPORTING, ExportingState.PAUSED),
    SOFT_PAUSE(AdminRequestKind.SOFT_PAUSE_EXPORTING, ExportingState.SOFT_PAUSED),
    RESUME(AdminRequestKind.RESUME_EXPORTING, ExportingState.EXPORTING);

    private final AdminRequestKind requestKind;
    private final ExportingState targetState;

    ExportingOperation(final AdminRequestKind requestKind, final ExportingState targetState)
    {
        this.requestKind = requestKind;
        this.targetState = targetState;
    }

    public AdminRequestKind requestKind()
    {
        return requestKind;
    }

    /** The state a replica must answer for the operation to have succeeded on it. */
    public ExportingState targetState()
    {
        return targetState;
    }
}
