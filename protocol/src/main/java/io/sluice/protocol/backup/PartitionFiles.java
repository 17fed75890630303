package io.sluice.protocol.backup;

/**
 * The names of a partition's files in a backup, shared by the broker that uploads them and the restore that writes
 * them back: {@value #STATE} is the partition's replicated state at the checkpoint (the broker's snapshot format),
 * {@value #RECORDS_PREFIX}{@code segment-*.log} its record log's sealed segments up to the checkpoint.
 */
public final class PartitionFiles
{
    public static final String STATE = "state";
    public static final String RECORDS_PREFIX = "records/";
    /** Where a restore leaves a partition's files in a broker's data directory, for the broker to start from. */
    public static final String RESTORE_DIRECTORY = "restore";

    private PartitionFiles()
    {
    }

    public static String restoreDirectory(final int partitionId)
    {
        return RESTORE_DIRECTORY + "/partition-" + partitionId;
    }
}
