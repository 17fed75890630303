package io.sluice.broker;

import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A broker's data directory carries its layout version; one written by an earlier Sluice version is refused. */
class DataLayoutTest
{
    @TempDir
    Path dir;

    @Test
    void aNewDirectoryGetsTheCurrentLayoutAndIsTakenAgain()
    {
        final Path broker = dir.resolve("broker-0");

        DataLayout.check(broker);
        DataLayout.check(broker);

        assertThat(broker.resolve(DataLayout.FILE)).hasContent("sluice data layout " + DataLayout.CURRENT);
    }

    @Test
    void raftDataWithoutALayoutFileIsRefusedNamingTheSettingAndChangesNothing() throws IOException
    {
        final Path broker = Files.createDirectories(dir.resolve("broker-1").resolve("raft"));

        assertThatThrownBy(() -> DataLayout.check(broker.getParent()))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.data-dir: ")
            .hasMessageContaining("written by a Sluice version before the cluster control group")
            .hasMessageContaining("empty data directory");
        assertThat(broker.getParent().resolve(DataLayout.FILE)).doesNotExist();
    }

    @Test
    void anotherLayoutVersionOrAnUnreadableFileIsRefused() throws IOException
    {
        final Path broker = Files.createDirectories(dir.resolve("broker-2"));
        Files.writeString(broker.resolve(DataLayout.FILE), "sluice data layout 5\n");
        assertThatThrownBy(() -> DataLayout.check(broker)).isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageContaining("layout version 5, and this broker reads version " + DataLayout.CURRENT);

        // Version 2: the control group's, with the append entries and record frames from before issue 11.
        Files.writeString(broker.resolve(DataLayout.FILE), "sluice data layout 2\n");
        assertThatThrownBy(() -> DataLayout.check(broker)).isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageContaining("layout version 2, and this broker reads version 4");

        // Version 3: snapshots whose remembered append ids were in a layout of their own.
        Files.writeString(broker.resolve(DataLayout.FILE), "sluice data layout 3\n");
        assertThatThrownBy(() -> DataLayout.check(broker)).isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageContaining("layout version 3, and this broker reads version 4");

        Files.writeString(broker.resolve(DataLayout.FILE), "something else");
        assertThatThrownBy(() -> DataLayout.check(broker)).isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageContaining("unreadable LAYOUT file");
    }
}
