package io.sluice.qa;

import io.sluice.protocol.codecs.AdminRequestEncoder;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.AdminResponseDecoder;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.OperationScope;
import io.sluice.protocol.codecs.TopologyRequestEncoder;
import io.sluice.protocol.codecs.TopologyResponseDecoder;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Talks to a broker's command port directly with the protocol module's transport and generated codecs, to
 * play a gateway whose request arrives late. Not thread-safe.
 */
final class BrokerAdminClient implements AutoCloseable
{
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final TransportClient transport = new TransportClient(TransportConfig.defaults());
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final AdminRequestEncoder adminEncoder = new AdminRequestEncoder();
    private final AdminResponseDecoder adminDecoder = new AdminResponseDecoder();
    private final TopologyRequestEncoder topologyEncoder = new TopologyRequestEncoder();
    private final TopologyResponseDecoder topologyDecoder = new TopologyResponseDecoder();
    private final ErrorResponseDecoder errorDecoder = new ErrorResponseDecoder();

    /** A replica's answer to an admin request. */
    record AdminAnswer(int brokerId, int partitionId, ExportingState state, long version)
    {
    }

    /** One partition of a broker's topology answer. */
    record ReplicaState(int partitionId, ExportingState state, long version)
    {
    }

    AdminAnswer admin(
        final InetSocketAddress broker, final int brokerId, final int partitionId, final AdminRequestKind kind,
        final long version) throws Exception
    {
        adminEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder)
            .brokerId(brokerId)
            .partitionId(partitionId)
            .kind(kind)
            .version(version)
            .leaderTargeted(BooleanType.FALSE)
            .operationScope(OperationScope.PARTITION)
            .operationPartitionsCount(0);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + adminEncoder.encodedLength();
        final DirectBuffer answer = send(broker, length);
        requireTemplate(answer, AdminResponseDecoder.TEMPLATE_ID, "admin " + kind + " to broker " + brokerId +
            " partition " + partitionId);
        adminDecoder.wrapAndApplyHeader(answer, 0, headerDecoder);
        return new AdminAnswer(adminDecoder.brokerId(), adminDecoder.partitionId(), adminDecoder.exportingState(),
            adminDecoder.version());
    }

    /** Partition id to the exporting state and its version, as the broker reports them. */
    Map<Integer, ReplicaState> topology(final InetSocketAddress broker, final int brokerId) throws Exception
    {
        topologyEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder).brokerId(brokerId);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + topologyEncoder.encodedLength();
        final DirectBuffer answer = send(broker, length);
        requireTemplate(answer, TopologyResponseDecoder.TEMPLATE_ID, "topology of broker " + brokerId);
        topologyDecoder.wrapAndApplyHeader(answer, 0, headerDecoder);
        final Map<Integer, ReplicaState> states = new HashMap<>();
        for (final TopologyResponseDecoder.PartitionsDecoder partition : topologyDecoder.partitions())
        {
            states.put(partition.partitionId(), new ReplicaState(
                partition.partitionId(), partition.exportingState(), partition.exportingStateVersion()));
            for (final TopologyResponseDecoder.PartitionsDecoder.ExportersDecoder exporter : partition.exporters())
            {
                exporter.exporterId();
            }
        }
        return states;
    }

    private DirectBuffer send(final InetSocketAddress broker, final int length) throws Exception
    {
        return transport.send(broker, MessageWriter.of(buffer, 0, length), TIMEOUT)
            .get(TIMEOUT.toMillis() + 1_000, TimeUnit.MILLISECONDS);
    }

    private void requireTemplate(final DirectBuffer answer, final int templateId, final String what)
    {
        headerDecoder.wrap(answer, 0);
        if (headerDecoder.templateId() == ErrorResponseDecoder.TEMPLATE_ID)
        {
            errorDecoder.wrapAndApplyHeader(answer, 0, headerDecoder);
            throw new AssertionError(what + " answered with error " + errorDecoder.code() + " (partition " +
                errorDecoder.partitionId() + "): " + errorDecoder.message());
        }
        if (headerDecoder.templateId() != templateId)
        {
            throw new AssertionError(what + " answered with template " + headerDecoder.templateId() +
                ", expected " + templateId);
        }
    }

    @Override
    public void close()
    {
        transport.close();
    }
}
