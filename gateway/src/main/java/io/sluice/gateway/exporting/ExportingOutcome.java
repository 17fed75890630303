package io.sluice.gateway.exporting;

import java.util.Collection;

/**
 * How an operation ended on one pair, and (summed up) on all of them: any failure makes the whole
 * operation FAILED; otherwise any timeout makes it TIMED_OUT.
 */
public enum ExportingOutcome
{
    SUCCEEDED,
    FAILED,
    TIMED_OUT;

    public static ExportingOutcome summarise(final Collection<ExportingOutcome> outcomes)
    {
        boolean timedOut = false;
        for (final ExportingOutcome outcome : outcomes)
        {
            if (outcome == FAILED)
            {
                return FAILED;
            }
            timedOut |= outcome == TIMED_OUT;
        }
        return timedOut ? TIMED_OUT : SUCCEEDED;
    }
}
