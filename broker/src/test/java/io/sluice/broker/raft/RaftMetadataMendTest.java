package io.sluice.broker.raft;

import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.util.SizeInBytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

class RaftMetadataMendTest
{
    private static final RaftGroupId GROUP = RaftGroupId.randomId();
    private static final RaftPeerId SELF = RaftPeerId.valueOf("broker-1");
    private static final RaftGroup PEERS = RaftGroup.valueOf(GROUP, List.of(
        RaftPeer.newBuilder().setId("broker-0").setAddress("127.0.0.1:1").build(),
        RaftPeer.newBuilder().setId("broker-1").setAddress("127.0.0.1:2").build(),
        RaftPeer.newBuilder().setId("broker-2").setAddress("127.0.0.1:3").build()));

    @TempDir
    Path raftDir;

    @Test
    void wholeFilesAreLeftAsTheyAre() throws IOException
    {
        final Path current = groupDir().resolve("current");
        final byte[] meta = "#\n#Thu Dec 03 21:00:00 UTC 2026\nvotedFor=broker-2\nterm=5\n".getBytes(StandardCharsets.ISO_8859_1);
        Files.write(current.resolve("raft-meta"), meta);

        assertThat(mendAll()).isEmpty();
        assertThat(Files.readAllBytes(current.resolve("raft-meta"))).isEqualTo(meta);
    }

    @Test
    void aTermFileCutShortGetsATermAboveEverythingHeldVotedForItself() throws IOException
    {
        final Path group = groupDir();
        Files.createDirectories(group.resolve("sm"));
        Files.write(group.resolve("sm").resolve("snapshot.7_120"), new byte[] {1});
        Files.write(group.resolve("sm").resolve("snapshot.6_90"), new byte[] {1});
        Files.write(group.resolve("current").resolve("raft-meta"), "#\n#Thu Dec 03\nvotedFor=bro".getBytes(StandardCharsets.ISO_8859_1));

        assertThat(mendAll()).hasSize(1);
        final Properties meta = new Properties();
        meta.load(new StringReader(Files.readString(group.resolve("current").resolve("raft-meta"), StandardCharsets.ISO_8859_1)));
        assertThat(meta.getProperty("term")).isEqualTo("8");
        assertThat(meta.getProperty("votedFor")).isEqualTo("broker-1");
        assertThat(RaftMetadataMend.isWholeMeta(group.resolve("current").resolve("raft-meta"))).isTrue();
    }

    @Test
    void anEmptyConfigurationWithNoEntryLeftInTheLogIsTheGroupsMembersAtTheLatestSnapshot() throws IOException
    {
        final Path group = groupDir();
        Files.createDirectories(group.resolve("sm"));
        Files.write(group.resolve("sm").resolve("snapshot.7_120"), new byte[] {1});
        Files.write(group.resolve("current").resolve("raft-meta.conf"), new byte[0]);

        assertThat(mendAll()).hasSize(1);
        final LogEntryProto conf = LogEntryProto.parseFrom(Files.readAllBytes(group.resolve("current").resolve("raft-meta.conf")));
        assertThat(conf.getIndex()).isEqualTo(120);
        assertThat(conf.getTerm()).isEqualTo(7);
        assertThat(conf.getConfigurationEntry().getPeersList()).extracting((p) -> p.getId().toStringUtf8())
            .containsExactlyInAnyOrder("broker-0", "broker-1", "broker-2");
    }

    private Path groupDir() throws IOException
    {
        final Path dir = raftDir.resolve(GROUP.getUuid().toString());
        Files.createDirectories(dir.resolve("current"));
        return dir;
    }

    private List<RaftMetadataMend.Mended> mendAll() throws IOException
    {
        return RaftMetadataMend.mendAll(raftDir, SELF, Map.of(GROUP, PEERS), SizeInBytes.valueOf("1MB"));
    }
}
