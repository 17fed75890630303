package io.sluice.qa.cluster;

/** A child process exited while the harness waited for it (not one the test killed). */
public final class ChildExitedException extends IllegalStateException
{
    public ChildExitedException(final String message)
    {
        super(message);
    }
}
