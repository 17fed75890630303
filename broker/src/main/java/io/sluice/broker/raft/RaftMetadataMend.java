package io.sluice.broker.raft;

import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServerConfigKeys.Log.CorruptionPolicy;
import org.apache.ratis.server.raftlog.segmented.LogSegment;
import org.apache.ratis.server.raftlog.segmented.LogSegmentPath;
import org.apache.ratis.util.SizeInBytes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Mends the Raft metadata files a full disk left empty, before Ratis reads them at start.
 * <p>
 * Ratis writes a member's term and vote ({@code current/raft-meta}) and its latest configuration
 * ({@code current/raft-meta.conf}) into a temporary file and moves it over the old one when the stream closes; when a
 * write finds no space the close still succeeds, so the file moved into place is empty and the member can no longer
 * start ("'term' not found in properties"). Both files are written on every election, so a disk filled by something
 * else meets them sooner or later.
 * <p>
 * What is lost is rebuilt from what the member still holds:
 * <ul>
 *   <li>the term and vote: the highest term of its log and snapshots plus one, voted for itself. Raft's one rule at
 *   stake is that a member votes once per term; one that voted for itself grants no other vote in that term, and a
 *   vote it cast in the term right after its last entry (an election whose leader had not yet sent it anything) is
 *   covered by the plus one. Only a vote two terms above everything it holds (two elections in a row that never
 *   reached it) stays unprotected. The member's term may be one above the group's: its leader then steps down once
 *   and the group elects again.</li>
 *   <li>the configuration: its latest configuration entry still in the log, as Ratis would have written it; if that
 *   was purged, the group's members as the broker knows them, at the latest snapshot.</li>
 * </ul>
 * Files that read back whole are not touched, so a normal start only reads them.
 */
public final class RaftMetadataMend
{
    private static final Logger LOG = LoggerFactory.getLogger(RaftMetadataMend.class);
    static final String META_FILE = "raft-meta";
    static final String CONF_FILE = "raft-meta.conf";
    private static final Pattern SNAPSHOT = Pattern.compile("snapshot\\.(\\d+)_(-?\\d+)");

    private RaftMetadataMend()
    {
    }

    /** One file mended, and what it holds now. */
    public record Mended(RaftGroupId group, Path file, String now)
    {
    }

    /**
     * Mends the metadata files of every group under {@code raftDir} (the Ratis storage directory) that read back
     * empty or cut short, and logs one line for each.
     *
     * @param self       this member, voted for in a mended term
     * @param groups     the groups the broker hosts, for a configuration no longer in the log
     * @param maxEntry   the largest log entry the broker writes (Ratis's write buffer size)
     */
    public static List<Mended> mendAll(final Path raftDir, final RaftPeerId self, final Map<RaftGroupId, RaftGroup> groups,
        final SizeInBytes maxEntry) throws IOException
    {
        final List<Mended> mended = new ArrayList<>();
        if (!Files.isDirectory(raftDir))
        {
            return mended;
        }
        try (Stream<Path> dirs = Files.list(raftDir))
        {
            for (final Path groupDir : dirs.filter(Files::isDirectory).sorted().toList())
            {
                final RaftGroupId groupId = groupIdOf(groupDir);
                final Path current = groupDir.resolve("current");
                if (groupId == null || !Files.isDirectory(current))
                {
                    continue;
                }
                mended.addAll(mend(groupId, groupDir, self, groups.get(groupId), maxEntry));
            }
        }
        return mended;
    }

    /** As {@link #mendAll}, for the one group {@code group} (its directory under {@code raftDir}). */
    public static List<Mended> mendGroup(final Path raftDir, final RaftPeerId self, final RaftGroup group,
        final SizeInBytes maxEntry) throws IOException
    {
        final Path groupDir = raftDir.resolve(group.getGroupId().getUuid().toString());
        if (!Files.isDirectory(groupDir.resolve("current")))
        {
            return new ArrayList<>();
        }
        return mend(group.getGroupId(), groupDir, self, group, maxEntry);
    }

    static List<Mended> mend(final RaftGroupId groupId, final Path groupDir, final RaftPeerId self, final RaftGroup group,
        final SizeInBytes maxEntry) throws IOException
    {
        final Path current = groupDir.resolve("current");
        final Path meta = current.resolve(META_FILE);
        final Path conf = current.resolve(CONF_FILE);
        final boolean metaBroken = Files.exists(meta) && !isWholeMeta(meta);
        final boolean confBroken = Files.exists(conf) && !isWholeConf(conf);
        final List<Mended> mended = new ArrayList<>();
        if (!metaBroken && !confBroken)
        {
            return mended;
        }
        final Held held = held(groupDir, maxEntry);
        if (metaBroken)
        {
            final long term = held.highestTerm + 1;
            final String text = "term=" + term + "\nvotedFor=" + self + "\n";
            SnapshotFile.write(meta, text.getBytes(StandardCharsets.ISO_8859_1));
            mended.add(log(new Mended(groupId, meta, "term " + term + ", voted for " + self +
                " (highest term held " + held.highestTerm + ")")));
        }
        if (confBroken)
        {
            if (held.latestConf != null)
            {
                SnapshotFile.write(conf, held.latestConf.toByteArray());
                mended.add(log(new Mended(groupId, conf, "the configuration entry at index " +
                    held.latestConf.getIndex() + " of the log")));
            }
            else if (group != null && !group.getPeers().isEmpty())
            {
                final RaftConfigurationProto.Builder peers = RaftConfigurationProto.newBuilder();
                group.getPeers().forEach((peer) -> peers.addPeers(peer.getRaftPeerProto()));
                final LogEntryProto entry = LogEntryProto.newBuilder().setTerm(Math.max(0, held.snapshotTerm))
                    .setIndex(held.snapshotIndex).setConfigurationEntry(peers).build();
                SnapshotFile.write(conf, entry.toByteArray());
                mended.add(log(new Mended(groupId, conf, "the group's members " + group.getPeers().stream()
                    .map(RaftPeer::getId).toList() + " at the snapshot index " + held.snapshotIndex)));
            }
            else
            {
                // Nothing to rebuild it from: without the file Ratis reads the configuration from the log.
                Files.delete(conf);
                mended.add(log(new Mended(groupId, conf, "deleted (no configuration held)")));
            }
        }
        return mended;
    }

    private static Mended log(final Mended mended)
    {
        LOG.warn("{}: {} read back empty or cut short (a write that found no space); mended to {}",
            mended.group(), mended.file(), mended.now());
        return mended;
    }

    static boolean isWholeMeta(final Path meta) throws IOException
    {
        final Properties properties = new Properties();
        properties.load(new StringReader(Files.readString(meta, StandardCharsets.ISO_8859_1)));
        final String term = properties.getProperty("term");
        if (term == null || properties.getProperty("votedFor") == null)
        {
            return false;
        }
        try
        {
            return Long.parseLong(term) >= 0;
        }
        catch (final NumberFormatException e)
        {
            return false;
        }
    }

    static boolean isWholeConf(final Path conf) throws IOException
    {
        try
        {
            return LogEntryProto.parseFrom(Files.readAllBytes(conf)).hasConfigurationEntry();
        }
        catch (final IOException e)
        {
            return false;
        }
    }

    /** What a member's storage still holds: the highest term, its latest configuration entry and snapshot. */
    private static final class Held
    {
        long highestTerm;
        LogEntryProto latestConf;
        long snapshotTerm = -1;
        long snapshotIndex = -1;
    }

    private static Held held(final Path groupDir, final SizeInBytes maxEntry) throws IOException
    {
        final Held held = new Held();
        final Path sm = groupDir.resolve("sm");
        if (Files.isDirectory(sm))
        {
            try (Stream<Path> files = Files.list(sm))
            {
                for (final Path file : files.toList())
                {
                    final Matcher snapshot = SNAPSHOT.matcher(file.getFileName().toString());
                    if (snapshot.matches())
                    {
                        final long term = Long.parseLong(snapshot.group(1));
                        final long index = Long.parseLong(snapshot.group(2));
                        held.highestTerm = Math.max(held.highestTerm, term);
                        if (index > held.snapshotIndex)
                        {
                            held.snapshotIndex = index;
                            held.snapshotTerm = term;
                        }
                    }
                }
            }
        }
        try (Stream<Path> files = Files.list(groupDir.resolve("current")))
        {
            for (final Path file : files.sorted().toList())
            {
                final LogSegmentPath segment = LogSegmentPath.matchLogSegment(file);
                if (segment == null)
                {
                    continue;
                }
                // A segment cut short by the same full disk reads up to its last whole entry.
                LogSegment.readSegmentFile(file.toFile(), segment.getStartEnd(), maxEntry,
                    CorruptionPolicy.WARN_AND_RETURN, null, (entry) ->
                    {
                        held.highestTerm = Math.max(held.highestTerm, entry.getTerm());
                        if (entry.hasConfigurationEntry() &&
                            (held.latestConf == null || entry.getIndex() > held.latestConf.getIndex()))
                        {
                            held.latestConf = entry;
                        }
                    });
            }
        }
        return held;
    }

    private static RaftGroupId groupIdOf(final Path groupDir)
    {
        try
        {
            return RaftGroupId.valueOf(UUID.fromString(groupDir.getFileName().toString()));
        }
        catch (final IllegalArgumentException e)
        {
            return null;
        }
    }
}
