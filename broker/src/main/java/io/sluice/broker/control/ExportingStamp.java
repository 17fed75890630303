package io.sluice.broker.control;

import io.sluice.broker.log.codecs.ExportingStateCode;
import io.sluice.protocol.codecs.ExportingState;

import java.util.Objects;

/** A partition's exporting state with the version of the operation that set it; the latest version wins. */
public record ExportingStamp(ExportingState state, long version)
{
    /** Before any operation reached the partition. */
    public static final ExportingStamp INITIAL = new ExportingStamp(ExportingState.EXPORTING, 0);

    public ExportingStamp
    {
        Objects.requireNonNull(state, "state");
        if (state != ExportingState.EXPORTING && state != ExportingState.PAUSED && state != ExportingState.SOFT_PAUSED)
        {
            throw new IllegalArgumentException("not an exporting state: " + state);
        }
    }

    public static ExportingStateCode toCode(final ExportingState state)
    {
        return switch (state)
        {
            case PAUSED -> ExportingStateCode.PAUSED;
            case SOFT_PAUSED -> ExportingStateCode.SOFT_PAUSED;
            case EXPORTING -> ExportingStateCode.EXPORTING;
            default -> throw new IllegalArgumentException("not an exporting state: " + state);
        };
    }

    /** @throws IllegalArgumentException for a code this version does not know. */
    public static ExportingState toExportingState(final ExportingStateCode code)
    {
        return switch (code)
        {
            case PAUSED -> ExportingState.PAUSED;
            case SOFT_PAUSED -> ExportingState.SOFT_PAUSED;
            case EXPORTING -> ExportingState.EXPORTING;
            default -> throw new IllegalArgumentException("unknown exporting state code " + code);
        };
    }
}
