package io.sluice.gateway.backfill;

import org.springframework.http.HttpStatus;

import java.util.List;

/**
 * Some partitions could not register a started backfill. Each partition's reset is atomic, so the
 * partitions in {@code registered} are reset and backfilling (supervised on their leaders), and the failed
 * ones are untouched.
 */
public final class BackfillStartException extends RuntimeException
{
    private final HttpStatus status;
    private final BackfillView registered;
    private final List<String> failures;

    public BackfillStartException(final HttpStatus status, final BackfillView registered, final List<String> failures)
    {
        super("backfill " + registered.backfillId() + " of exporter " + registered.exporterId() + ": partitions " +
            registered.unavailablePartitions() + " were not reset (" + String.join("; ", failures) + ")" +
            (registered.tasks().isEmpty() ? ", nothing was changed" :
                "; the other partitions are reset and backfilling (" + registered.ranges().size() + " ranges)"));
        this.status = status;
        this.registered = registered;
        this.failures = List.copyOf(failures);
    }

    public HttpStatus status()
    {
        return status;
    }

    public BackfillView registered()
    {
        return registered;
    }

    public List<String> failures()
    {
        return failures;
    }
}
