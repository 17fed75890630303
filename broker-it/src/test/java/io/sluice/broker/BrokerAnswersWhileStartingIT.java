package io.sluice.broker;

import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.AdminResponseDecoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.ExportingState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 30: a broker restarted into a running cluster listens on its command port before it has recovered its Raft
 * groups, and until then answers every request with the retriable UNAVAILABLE, saying it is starting: a topology
 * poll, an append and a pause of one of its pairs alike (nothing is served, so nothing is promised, from a replica
 * not recovered yet). Once started it serves them.
 */
class BrokerAnswersWhileStartingIT
{
    @TempDir
    Path dataDir;

    @Test
    @Timeout(120)
    void aRestartingBrokerAnswersUnavailableUntilItsGroupsAreRecoveredThenServes() throws Exception
    {
        try (TestCluster cluster = TestCluster.start(dataDir, 3, 3, 3))
        {
            for (int p = 1; p <= 3; p++)
            {
                cluster.awaitLeader(p);
            }
            cluster.append(1, List.of("k"), List.of("\"before the restart\""));
            cluster.stopBroker(1);

            final CountDownLatch listening = new CountDownLatch(1);
            final CountDownLatch release = new CountDownLatch(1);
            final CompletableFuture<Broker> started = CompletableFuture.supplyAsync(() ->
            {
                try
                {
                    return cluster.startBroker(1, () ->
                    {
                        listening.countDown();
                        try
                        {
                            release.await(60, TimeUnit.SECONDS);
                        }
                        catch (final InterruptedException e)
                        {
                            Thread.currentThread().interrupt();
                        }
                    });
                }
                catch (final java.io.IOException e)
                {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            try
            {
                assertThat(listening.await(60, TimeUnit.SECONDS)).as("broker 1's command port listens").isTrue();

                final ErrorResponseDecoder topology = TestCluster.error(cluster.send(1, topologyRequest(1)));
                assertThat(topology.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                assertThat(topology.message()).startsWith("broker 1 is starting (");

                final ErrorResponseDecoder append = TestCluster.error(cluster.send(1,
                    TestCluster.appendRequest(2, List.of("k"), List.of("\"while starting\""))));
                assertThat(append.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                assertThat(append.message()).startsWith("broker 1 is starting (");

                final ErrorResponseDecoder pause = TestCluster.error(cluster.send(1,
                    TestCluster.adminRequest(1, 2, AdminRequestKind.PAUSE_EXPORTING, 1)));
                assertThat(pause.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                assertThat(pause.message()).startsWith("broker 1 is starting (");
            }
            finally
            {
                release.countDown();
            }
            started.get(60, TimeUnit.SECONDS);

            assertThat(cluster.topology(1).partitions().count()).isEqualTo(3);
            final AdminResponseDecoder paused = cluster.admin(1, 2, AdminRequestKind.PAUSE_EXPORTING, 2);
            assertThat(paused.exportingState()).isEqualTo(ExportingState.PAUSED);
        }
    }

    private static io.sluice.protocol.transport.MessageWriter topologyRequest(final int brokerId)
    {
        final org.agrona.ExpandableArrayBuffer buffer = new org.agrona.ExpandableArrayBuffer(64);
        final io.sluice.protocol.codecs.TopologyRequestEncoder encoder = new io.sluice.protocol.codecs.TopologyRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new io.sluice.protocol.codecs.MessageHeaderEncoder()).brokerId(brokerId);
        return TestCluster.bytes(buffer, io.sluice.protocol.codecs.MessageHeaderEncoder.ENCODED_LENGTH +
            encoder.encodedLength());
    }
}
