package io.sluice.broker.partition;

import io.sluice.broker.append.AppendIdempotency;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.MD5FileUtil;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The snapshots of one partition replica on disk, in the group's state machine directory
 * ({@code <broker>/raft/<group uuid>/sm/}):
 * <pre>
 *   snapshot.&lt;term&gt;_&lt;index&gt;(.md5)   {@link PartitionSnapshot}: last position and its Raft index,
 *                                   exporting state and version, exporter positions, backfills,
 *                                   remembered append ids ({@link AppendIdempotency})
 *   records/segment-*.log(.md5)      the record log, see {@link io.sluice.broker.log.RecordLog}
 * </pre>
 * File names and the checksum beside each are Ratis's ({@link SimpleStateMachineStorage}), so Ratis finds the
 * latest snapshot on restart. A snapshot lists its state file and the sealed record segments, so a replica that
 * installs it from the leader (after the Raft log was purged) receives every record no exporter has acknowledged.
 * Only the latest snapshot is kept.
 * <p>
 * Thread-safety: written and loaded on the state machine's apply thread; {@link #latest()} from any thread.
 */
final class PartitionSnapshotStore
{
    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private Path directory;
    private volatile SnapshotInfo latest;

    /** A snapshot file read back: where it was taken and what it holds. */
    record Loaded(TermIndex termIndex, Path file, PartitionSnapshot snapshot)
    {
    }

    void init(final RaftStorage raftStorage) throws IOException
    {
        storage.init(raftStorage);
        directory = raftStorage.getStorageDir().getStateMachineDir().toPath();
    }

    /** The state machine directory, which also holds the record log. */
    Path directory()
    {
        return directory;
    }

    StateMachineStorage storage()
    {
        return storage;
    }

    /** The latest snapshot Ratis finds in the directory (checksum verified), read; null when there is none. */
    Loaded loadLatest() throws IOException
    {
        final SingleFileSnapshotInfo info = storage.loadLatestSnapshot();
        if (info == null)
        {
            latest = null;
            return null;
        }
        final Path file = info.getFile().getPath();
        return new Loaded(info.getTermIndex(), file, PartitionSnapshot.readFrom(file));
    }

    /**
     * Writes {@code snapshot} as the one taken at {@code termIndex}, with its checksum, deletes the older ones
     * and makes it the latest, listing {@code sealedSegments} with it.
     */
    SnapshotInfo save(final TermIndex termIndex, final PartitionSnapshot snapshot, final List<Path> sealedSegments)
        throws IOException
    {
        final File file = storage.getSnapshotFile(termIndex.getTerm(), termIndex.getIndex());
        snapshot.writeTo(file.toPath());
        MD5FileUtil.computeAndSaveMd5ForFile(file);
        final SnapshotInfo info = listed(file.toPath(), termIndex, sealedSegments);
        deleteOlderSnapshots(file.toPath());
        return info;
    }

    /** Makes a loaded snapshot the latest, listing the record log's {@code sealedSegments} with it. */
    SnapshotInfo listed(final Path stateFile, final TermIndex termIndex, final List<Path> sealedSegments)
    {
        final List<FileInfo> files = new ArrayList<>();
        files.add(new FileInfo(stateFile, null));
        for (final Path segment : sealedSegments)
        {
            files.add(new FileInfo(segment, null));
        }
        final SnapshotInfo info = new FileListSnapshotInfo(files, termIndex);
        latest = info;
        return info;
    }

    /** The latest snapshot, null before the first. */
    SnapshotInfo latest()
    {
        return latest;
    }

    private void deleteOlderSnapshots(final Path keep) throws IOException
    {
        final List<Path> old;
        try (Stream<Path> listing = Files.list(directory))
        {
            old = listing.filter((p) ->
                {
                    final String name = p.getFileName().toString();
                    return name.startsWith("snapshot.") && !name.startsWith(keep.getFileName().toString());
                })
                .toList();
        }
        for (final Path path : old)
        {
            Files.deleteIfExists(path);
        }
    }
}
