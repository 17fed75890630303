package io.sluice.protocol.backup;

import io.sluice.protocol.backup.BackupManifest.PartitionCut;
import io.sluice.protocol.backup.BackupManifest.PartitionObject;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks a backup without restoring it: its manifest is there and readable, every partition of its layout is covered
 * (its replicated state is stored), and every object it lists is present with its size and SHA-256. The gateway's
 * verify call and the restore both use it, so a backup that does not verify is never restored.
 */
public final class BackupVerifier
{
    private BackupVerifier()
    {
    }

    /** A problem with one object: its key and what is wrong ("missing", "size 12, manifest says 40", ...). */
    public record Problem(String object, String problem)
    {
    }

    public record Verification(long backupId, BackupManifest manifest, int checkedObjects, List<Problem> problems)
    {
        public boolean ok()
        {
            return problems.isEmpty();
        }
    }

    public static Verification verify(final BackupStore store, final long backupId) throws IOException
    {
        final List<Problem> problems = new ArrayList<>();
        final String manifestKey = BackupKeys.manifest(backupId);
        final byte[] bytes = store.getBytes(manifestKey);
        if (bytes == null)
        {
            problems.add(new Problem(manifestKey, store.getBytes(BackupKeys.cut(backupId)) == null ?
                "missing: there is no backup " + backupId + " in the " + store.describe() :
                "missing: backup " + backupId + " is not completed"));
            return new Verification(backupId, null, 0, problems);
        }
        final BackupManifest manifest;
        try
        {
            manifest = BackupManifest.parse(bytes, manifestKey);
        }
        catch (final IllegalArgumentException e)
        {
            problems.add(new Problem(manifestKey, "unreadable: " + e.getMessage()));
            return new Verification(backupId, null, 1, problems);
        }
        int checked = 1;
        for (int p = 1; p <= manifest.layout().partitions(); p++)
        {
            final PartitionCut cut = manifest.partition(p);
            if (cut == null || cut.objects().stream().noneMatch((o) -> o.name().equals(PartitionFiles.STATE)))
            {
                problems.add(new Problem(BackupKeys.partitionObject(backupId, p, PartitionFiles.STATE),
                    "partition " + p + " is not covered: the manifest lists no state for it"));
            }
        }
        for (final PartitionCut cut : manifest.partitions())
        {
            for (final PartitionObject object : cut.objects())
            {
                checked++;
                final String key = BackupKeys.partitionObject(backupId, cut.partitionId(), object.name());
                final long size = store.size(key);
                if (size < 0)
                {
                    problems.add(new Problem(key, "missing"));
                    continue;
                }
                if (size != object.size())
                {
                    problems.add(new Problem(key, "size " + size + " bytes, the manifest says " + object.size()));
                    continue;
                }
                final BackupDigests.Digested digested;
                try (InputStream in = store.open(key))
                {
                    digested = BackupDigests.digest(in);
                }
                if (!digested.sha256().equals(object.sha256()))
                {
                    problems.add(new Problem(key, "SHA-256 " + digested.sha256() + ", the manifest says " +
                        object.sha256()));
                }
            }
        }
        return new Verification(backupId, manifest, checked, problems);
    }
}
