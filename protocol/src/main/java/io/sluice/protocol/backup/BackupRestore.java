package io.sluice.protocol.backup;

import io.sluice.protocol.backup.BackupManifest.PartitionCut;
import io.sluice.protocol.backup.BackupManifest.PartitionObject;
import io.sluice.protocol.cluster.PartitionDistribution;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * Writes brokers' data directories from a backup: for every partition a broker replicates, the partition's stored
 * files go to {@code <data-dir>/broker-<id>/restore/partition-<p>/}, where the broker starts that replica from
 * (every replica of a partition from the same state, with an empty Raft log). Everything is checked before anything
 * is written: the backup verifies, the cluster layout is the backup's, and every target data directory is empty or
 * absent. Each broker's directory is written beside its place and moved there once complete, so a failure leaves
 * nothing behind.
 */
public final class BackupRestore
{
    private BackupRestore()
    {
    }

    /** Why a restore was refused, in one line; nothing was written. */
    public static final class RestoreRefusedException extends Exception
    {
        public RestoreRefusedException(final String message)
        {
            super(message);
        }
    }

    /** What a restore wrote: per broker, the partitions and bytes. */
    public record Restored(long backupId, List<Integer> brokers, long bytes)
    {
    }

    public static Restored restore(
        final BackupStore store,
        final long backupId,
        final PartitionDistribution distribution,
        final Path dataDir,
        final List<Integer> brokers) throws RestoreRefusedException, IOException
    {
        for (final int broker : brokers)
        {
            distribution.checkNodeId(broker);
        }
        final BackupVerifier.Verification verification = BackupVerifier.verify(store, backupId);
        if (!verification.ok())
        {
            final BackupVerifier.Problem first = verification.problems().get(0);
            throw new RestoreRefusedException("backup " + backupId + " does not verify: " + first.object() + ": " +
                first.problem() + (verification.problems().size() > 1 ?
                " (and " + (verification.problems().size() - 1) + " more problems)" : ""));
        }
        final BackupManifest manifest = verification.manifest();
        final BackupManifest.Layout here = new BackupManifest.Layout(distribution.brokerCount(),
            distribution.partitionCount(), distribution.replicationFactor());
        if (!here.equals(manifest.layout()))
        {
            throw new RestoreRefusedException("backup " + backupId + " was taken of a cluster of " + manifest.layout() +
                "; this cluster has " + here);
        }
        for (final int broker : brokers)
        {
            final Path dir = brokerDir(dataDir, broker);
            if (Files.exists(dir) && !isEmptyDirectory(dir))
            {
                throw new RestoreRefusedException("the data directory " + dir.toAbsolutePath().normalize() +
                    " of broker " + broker + " is not empty; restore only into an empty one");
            }
        }
        long bytes = 0;
        final List<Path> written = new ArrayList<>();
        try
        {
            for (final int broker : brokers)
            {
                final Path target = brokerDir(dataDir, broker);
                final Path temp = target.resolveSibling(target.getFileName() + ".restoring");
                deleteTree(temp);
                written.add(temp);
                for (final int partitionId : distribution.partitionsOf(broker))
                {
                    final PartitionCut cut = manifest.partition(partitionId);
                    final Path partitionDir = temp.resolve(PartitionFiles.restoreDirectory(partitionId));
                    for (final PartitionObject object : cut.objects())
                    {
                        bytes += copy(store, BackupKeys.partitionObject(backupId, partitionId, object.name()), object,
                            partitionDir.resolve(object.name()));
                    }
                }
            }
            for (final int broker : brokers)
            {
                final Path target = brokerDir(dataDir, broker);
                final Path temp = target.resolveSibling(target.getFileName() + ".restoring");
                if (Files.exists(target))
                {
                    Files.delete(target);
                }
                Files.move(temp, target);
            }
        }
        catch (final IOException | RestoreRefusedException e)
        {
            for (final Path temp : written)
            {
                deleteTree(temp);
            }
            throw e;
        }
        return new Restored(backupId, List.copyOf(brokers), bytes);
    }

    private static long copy(final BackupStore store, final String key, final PartitionObject object, final Path target)
        throws IOException, RestoreRefusedException
    {
        Files.createDirectories(target.getParent());
        final MessageDigest sha256 = BackupDigests.sha256();
        final long size;
        try (InputStream in = new DigestInputStream(store.open(key), sha256);
             OutputStream out = Files.newOutputStream(target))
        {
            size = in.transferTo(out);
        }
        final String digest = HexFormat.of().formatHex(sha256.digest());
        if (size != object.size() || !digest.equals(object.sha256()))
        {
            throw new RestoreRefusedException("backup object " + key + " changed while it was restored (size " + size +
                ", SHA-256 " + digest + "; the manifest says " + object.size() + ", " + object.sha256() + ")");
        }
        return size;
    }

    public static Path brokerDir(final Path dataDir, final int brokerId)
    {
        return dataDir.resolve("broker-" + brokerId);
    }

    private static boolean isEmptyDirectory(final Path dir) throws IOException
    {
        if (!Files.isDirectory(dir))
        {
            return false;
        }
        try (Stream<Path> entries = Files.list(dir))
        {
            return entries.findAny().isEmpty();
        }
    }

    private static void deleteTree(final Path dir) throws IOException
    {
        if (!Files.exists(dir))
        {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir))
        {
            for (final Path path : walk.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(path);
            }
        }
    }
}
