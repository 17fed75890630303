package io.sluice.exporter.spi;

/**
 * Snapshots of an exporter's sink (issue 26), in a place the operator set up (for OpenSearch, a snapshot repository
 * the operator registered): a backup takes one while acknowledgements are held, so the snapshot holds every record
 * the exporter acknowledged; a restore replaces the sink's data with it. Each call blocks until the sink answered,
 * at most {@code timeoutMillis}. One instance is used from one thread at a time.
 */
public interface SinkSnapshots extends AutoCloseable
{
    /** The state of a snapshot that ended well; anything else fails a backup and its verify. */
    String SUCCESS = "SUCCESS";
    /** The state of a snapshot the sink does not have. */
    String MISSING = "MISSING";

    /** A snapshot as the sink reports it: its state (SUCCESS, FAILED, PARTIAL, IN_PROGRESS, MISSING) and where it is or why it failed. */
    record Snapshot(String name, String state, String detail)
    {
        public boolean succeeded()
        {
            return SUCCESS.equals(state);
        }
    }

    /**
     * Takes snapshot {@code name} of the exporter's data and waits until it ended; a refusal is a state, not a throw.
     * When the sink already has a snapshot of that name, it is this backup's own, taken through another broker whose
     * answer came too late (the gateway checks the name is free before the backup starts): wait for it to end and
     * answer its state instead of refusing.
     */
    Snapshot take(String name, long timeoutMillis) throws Exception;

    /** The snapshot's state now ({@link #MISSING} when the sink does not have it). */
    Snapshot check(String name, long timeoutMillis) throws Exception;

    /**
     * Replaces the exporter's data in the sink with snapshot {@code name} (what was there is deleted first) and waits
     * until it is back.
     *
     * @throws Exception naming what the sink refused (the repository not registered, the snapshot missing).
     */
    void restore(String name, long timeoutMillis) throws Exception;

    @Override
    void close() throws Exception;
}
