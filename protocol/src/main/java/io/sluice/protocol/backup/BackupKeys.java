package io.sluice.protocol.backup;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The layout of backups in a {@link BackupStore}:
 * <pre>
 *   backups/&lt;id&gt;/started                   written once the backup's hold is taken, before its cut: a backup whose
 *                                         cut never comes (its gateway died) reads FAILED after the hold's lease
 *   backups/&lt;id&gt;/cut                       the committed cut ({@link BackupManifest} without objects): written by the
 *                                         gateway once every partition's leader captured its state; a broker uploads
 *                                         only once it is there
 *   backups/&lt;id&gt;/partition-&lt;p&gt;/&lt;file&gt;     one partition's files: {@code state} (its replicated state at the
 *                                         checkpoint) and {@code records/segment-*.log} (its record log up to it)
 *   backups/&lt;id&gt;/partition-&lt;p&gt;.upload     the uploading broker's report ({@link PartitionUpload}): objects or failure
 *   backups/&lt;id&gt;/manifest                  written last: the cut with every object's size and SHA-256
 *   backups/&lt;id&gt;/failed                    why the backup failed, when it did
 * </pre>
 */
public final class BackupKeys
{
    public static final String ROOT = "backups/";

    private BackupKeys()
    {
    }

    public static String prefix(final long backupId)
    {
        return ROOT + backupId + "/";
    }

    public static String cut(final long backupId)
    {
        return prefix(backupId) + "cut";
    }

    public static String started(final long backupId)
    {
        return prefix(backupId) + "started";
    }

    public static String manifest(final long backupId)
    {
        return prefix(backupId) + "manifest";
    }

    public static String failed(final long backupId)
    {
        return prefix(backupId) + "failed";
    }

    public static String upload(final long backupId, final int partitionId)
    {
        return prefix(backupId) + "partition-" + partitionId + ".upload";
    }

    /** The key of a partition's file named {@code name} ("state", "records/segment-...log"). */
    public static String partitionObject(final long backupId, final int partitionId, final String name)
    {
        return prefix(backupId) + "partition-" + partitionId + "/" + name;
    }

    /** Every backup id that has a cut (or was started) in the store, oldest (smallest) first. */
    public static List<Long> backupIds(final BackupStore store) throws IOException
    {
        final TreeSet<Long> ids = new TreeSet<>();
        for (final String key : store.list(ROOT))
        {
            final String rest = key.substring(ROOT.length());
            final int slash = rest.indexOf('/');
            if (slash > 0 && (rest.substring(slash + 1).equals("cut") || rest.substring(slash + 1).equals("started")))
            {
                try
                {
                    ids.add(Long.parseLong(rest.substring(0, slash)));
                }
                catch (final NumberFormatException e)
                {
                    // not a backup of ours
                }
            }
        }
        return new ArrayList<>(ids);
    }
}
