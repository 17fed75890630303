package io.sluice.gateway.broker;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.codecs.TopologyResponseEncoder;
import io.sluice.protocol.message.ErrorResponseWriter;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(30)
class ResponseDecodersTest
{
    @Test
    void validTopologyDecodes()
    {
        final BrokerTopology topology = ResponseDecoders.get().decodeTopology(topologyBytes(), 1);

        assertThat(topology.partitions()).hasSize(2);
        assertThat(topology.partitions().get(0).role()).isEqualTo(PartitionRole.LEADER);
        assertThat(topology.partitions().get(1).exporterPositions()).containsEntry("file", 17L).containsEntry("audit", 3L);
    }

    @Test
    void everyTruncationOrCorruptionFailsCleanlyOrDecodes()
    {
        final UnsafeBuffer valid = topologyBytes();
        final Random random = new Random(42);
        for (int length = 0; length < valid.capacity(); length++)
        {
            final byte[] truncated = new byte[length];
            valid.getBytes(0, truncated);
            decodeCleanly(new UnsafeBuffer(truncated));
        }
        for (int round = 0; round < 20_000; round++)
        {
            final byte[] corrupted = new byte[valid.capacity()];
            valid.getBytes(0, corrupted);
            for (int flips = 1 + random.nextInt(4); flips > 0; flips--)
            {
                corrupted[random.nextInt(corrupted.length)] = (byte)random.nextInt(256);
            }
            decodeCleanly(new UnsafeBuffer(corrupted));
        }
    }

    @Test
    void hugeVarDataLengthIsRefusedBeforeAllocating()
    {
        final UnsafeBuffer error = new UnsafeBuffer(new byte[64]);
        ErrorResponseWriter.of(ErrorCode.NOT_LEADER, 1, 2, "x").write(error, 0);
        final int lengthOffset = 8 + 2 + 4 + 4;
        error.putInt(lengthOffset, Integer.MAX_VALUE - 5);

        assertThatThrownBy(() -> ResponseDecoders.get().decodeAdmin(error, new PartitionReplica(0, 1)))
            .isInstanceOf(MalformedResponseException.class);
    }

    @Test
    void errorResponseBecomesBrokerErrorWithLeaderHint()
    {
        final ErrorResponseWriter writer = ErrorResponseWriter.of(ErrorCode.NOT_LEADER, 4, 2, "partition 4 on broker 1: not leader (leader is 2)");
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[writer.encodedLength()]);
        writer.write(buffer, 0);

        assertThatThrownBy(() -> ResponseDecoders.get().decodeAppend(buffer, 1, 4))
            .isInstanceOfSatisfying(BrokerErrorException.class, e ->
            {
                assertThat(e.code()).isEqualTo(ErrorCode.NOT_LEADER);
                assertThat(e.leaderId()).isEqualTo(2);
                assertThat(e.getMessage()).contains("leader is 2");
            });
    }

    private static void decodeCleanly(final UnsafeBuffer buffer)
    {
        try
        {
            ResponseDecoders.get().decodeTopology(buffer, 1);
        }
        catch (final MalformedResponseException | BrokerErrorException expected)
        {
            // a clean refusal
        }
    }

    private static UnsafeBuffer topologyBytes()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[512]);
        final TopologyResponseEncoder encoder = new TopologyResponseEncoder();
        final TopologyResponseEncoder.PartitionsEncoder partitions = encoder
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .brokerId(1)
            .partitionsCount(2);
        partitions.next().partitionId(1).role(PartitionRole.LEADER).term(3).leaderId(1)
            .exportingState(ExportingState.EXPORTING).exportingStateVersion(0).lastPosition(10).exportedPosition(9)
            .exportersCount(1).next().position(9).exporterId("file");
        final TopologyResponseEncoder.PartitionsEncoder.ExportersEncoder exporters = partitions.next()
            .partitionId(2).role(PartitionRole.FOLLOWER).term(3).leaderId(0)
            .exportingState(ExportingState.PAUSED).exportingStateVersion(5).lastPosition(20).exportedPosition(3)
            .exportersCount(2);
        exporters.next().position(17).exporterId("file");
        exporters.next().position(3).exporterId("audit");
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
        return new UnsafeBuffer(buffer.byteArray(), 0, length);
    }
}
