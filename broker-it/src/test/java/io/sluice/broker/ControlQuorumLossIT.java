package io.sluice.broker;

import io.sluice.broker.control.ControlGroup;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.AdminResponseDecoder;
import io.sluice.protocol.codecs.ExportingState;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A broker keeps no lasting harm from a control group without quorum: once the quorum is back, a pause it is asked
 * for commits, however long the quorum was gone.
 */
class ControlQuorumLossIT
{
    @TempDir
    Path dataDir;

    @AutoClose
    private TestCluster cluster;

    @Test
    @Timeout(180)
    void brokerThatOutlastedItsRaftClientsRetriesWithoutControlQuorumObeysPausesOnceTheQuorumIsBack() throws Exception
    {
        final int partitionId = 1;
        cluster = TestCluster.start(dataDir, 3, 1, 3, (c) -> c.withAutoRebalance(false)
            .withAdminTimeout(Duration.ofSeconds(2)));
        cluster.awaitLeader(partitionId);
        await("every control replica caught up").atMost(Duration.ofSeconds(30))
            .until(() -> cluster.brokers[0].control().caughtUp() && cluster.brokers[1].control().caughtUp() &&
                cluster.brokers[2].control().caughtUp());
        final int controlLeader = cluster.brokers[0].control().leaderId();
        final int survivor = (controlLeader + 1) % 3;

        for (int b = 0; b < 3; b++)
        {
            if (b != survivor)
            {
                cluster.crashBroker(b);
            }
        }
        // No control quorum: the pause cannot commit, and the survivor's Raft client goes on retrying it behind the
        // answer until its attempts run out (the peers' ports refuse at once).
        assertThatThrownBy(() -> cluster.admin(survivor, partitionId, AdminRequestKind.PAUSE_EXPORTING, 1))
            .hasMessageContaining("failed");
        Thread.sleep(ControlGroup.CLIENT_ATTEMPTS * ControlGroup.CLIENT_RETRY_SLEEP_MS + 3_000);

        for (int b = 0; b < 3; b++)
        {
            if (b != survivor)
            {
                cluster.startBroker(b);
            }
        }
        await("a control leader other than the survivor").atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(200)).until(() ->
            {
                final int leader = cluster.brokers[survivor].control().leaderId();
                if (leader == survivor)
                {
                    cluster.brokers[survivor].control().handOverLeadership(Duration.ofSeconds(2));
                    return false;
                }
                return leader >= 0 && cluster.brokers[leader].control().isLeader();
            });

        // The survivor proposes through its Raft client to the new leader: it must commit, not fail at once.
        final AtomicReference<AdminResponseDecoder> paused = new AtomicReference<>();
        await("the survivor commits a pause").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(500))
            .ignoreExceptions().until(() ->
            {
                paused.set(cluster.admin(survivor, partitionId, AdminRequestKind.PAUSE_EXPORTING, 2));
                return true;
            });
        assertThat(paused.get().exportingState()).isEqualTo(ExportingState.PAUSED);
        assertThat(cluster.brokers[survivor].control().leaderId()).isNotEqualTo(survivor);
        for (int b = 0; b < 3; b++)
        {
            final int broker = b;
            await("broker " + b + " holds the pause").atMost(Duration.ofSeconds(10)).until(() ->
                cluster.brokers[broker].partition(partitionId).exporting().heldState() == ExportingState.PAUSED);
        }
    }
}
