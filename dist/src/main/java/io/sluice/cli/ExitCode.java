package io.sluice.cli;

/**
 * The admin CLI's exit codes (CONTRACT §6). Scripts branch on these, so they never change meaning.
 */
public final class ExitCode
{
    /** Every target succeeded (HTTP 200/202), or a read answered. */
    public static final int SUCCEEDED = 0;
    /** Some targets failed (HTTP 503), or a backfill ended FAILED or CANCELLED. */
    public static final int FAILED = 1;
    /** None failed but some timed out (HTTP 504). */
    public static final int TIMED_OUT = 2;
    /** Refused: bad arguments, 400, 401, 404, 409 and any other 4xx. */
    public static final int REFUSED = 3;
    /** The gateway could not be reached, or did not answer within the timeout. */
    public static final int UNREACHABLE = 4;

    private ExitCode()
    {
    }

    /** The exit code an HTTP status stands for. */
    public static int ofHttpStatus(final int status)
    {
        if (status >= 200 && status < 300)
        {
            return SUCCEEDED;
        }
        if (status == 504)
        {
            return TIMED_OUT;
        }
        if (status >= 400 && status < 500)
        {
            return REFUSED;
        }
        return FAILED;
    }

    /** The worse of two codes for the final answer of a multi-round call: failed beats timed out beats ok. */
    public static int worst(final int a, final int b)
    {
        return rank(a) >= rank(b) ? a : b;
    }

    private static int rank(final int code)
    {
        switch (code)
        {
            case SUCCEEDED:
                return 0;
            case TIMED_OUT:
                return 1;
            case FAILED:
                return 2;
            case REFUSED:
                return 3;
            default:
                return 4;
        }
    }
}
