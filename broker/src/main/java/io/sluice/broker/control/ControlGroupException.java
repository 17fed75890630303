package io.sluice.broker.control;

/** The control group could not take or commit an entry (no leader, no quorum, closed). */
public final class ControlGroupException extends RuntimeException
{
    public ControlGroupException(final String message)
    {
        super(message);
    }
}
