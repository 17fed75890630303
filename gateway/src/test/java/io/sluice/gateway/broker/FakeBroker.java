package io.sluice.gateway.broker;

import io.sluice.protocol.codecs.AdminRequestDecoder;
import io.sluice.protocol.codecs.AdminResponseEncoder;
import io.sluice.protocol.codecs.AppendRequestDecoder;
import io.sluice.protocol.codecs.AppendResponseEncoder;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.codecs.TopologyRequestDecoder;
import io.sluice.protocol.codecs.TopologyResponseEncoder;
import io.sluice.protocol.message.ErrorResponseWriter;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.ResponseChannel;
import io.sluice.protocol.transport.TransportConfig;
import io.sluice.protocol.transport.TransportServer;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A scripted broker on a real socket, for testing the gateway's client without Ratis: it leads the
 * partitions it is told to, answers NOT_LEADER with a hint otherwise, or answers garbage or nothing.
 */
final class FakeBroker implements AutoCloseable
{
    enum Mode
    {
        NORMAL, GARBAGE, SILENT,
        /** Answers every request UNAVAILABLE, as a broker does while it recovers its Raft groups. */
        STARTING
    }

    final int brokerId;
    final TransportServer server;
    final Map<Integer, Integer> leaderHints = new ConcurrentHashMap<>();
    final Map<Integer, Boolean> leading = new ConcurrentHashMap<>();
    final AtomicInteger appendsReceived = new AtomicInteger();
    /** The idHigh of every append request received, in any mode (0 when it carried no id). */
    final List<Long> appendIds = new CopyOnWriteArrayList<>();
    final AtomicInteger adminsReceived = new AtomicInteger();
    /** Topology requests answered (in the normal mode). */
    final AtomicInteger topologiesAnswered = new AtomicInteger();
    volatile BooleanType lastLeaderTargeted;
    final AtomicLong nextPosition = new AtomicLong(1);
    volatile Mode mode = Mode.NORMAL;
    volatile long term = 1;

    FakeBroker(final int brokerId)
    {
        this.brokerId = brokerId;
        this.server = TransportServer.start(new InetSocketAddress("127.0.0.1", 0), this::onRequest, TransportConfig.defaults());
    }

    String address()
    {
        return "127.0.0.1:" + server.localAddress().getPort();
    }

    private void onRequest(final DirectBuffer buffer, final int offset, final int length, final ResponseChannel response)
    {
        final MessageHeaderDecoder received = new MessageHeaderDecoder().wrap(buffer, offset);
        if (received.templateId() == AppendRequestDecoder.TEMPLATE_ID)
        {
            appendIds.add(new AppendRequestDecoder()
                .wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, received.blockLength(), received.version())
                .idHigh());
        }
        if (mode == Mode.SILENT)
        {
            return;
        }
        if (mode == Mode.STARTING)
        {
            response.respond(ErrorResponseWriter.of(ErrorCode.UNAVAILABLE, 0, ErrorResponseWriter.NO_LEADER,
                "broker " + brokerId + " is starting (recovering its 4 Raft groups): try again shortly"));
            return;
        }
        if (mode == Mode.GARBAGE)
        {
            response.respond(bytes(new byte[]{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}));
            return;
        }
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, offset);
        switch (header.templateId())
        {
            case AppendRequestDecoder.TEMPLATE_ID ->
            {
                final AppendRequestDecoder append = new AppendRequestDecoder()
                    .wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
                final int partitionId = append.partitionId();
                appendsReceived.incrementAndGet();
                if (!leading.getOrDefault(partitionId, false))
                {
                    response.respond(ErrorResponseWriter.of(ErrorCode.NOT_LEADER, partitionId,
                        leaderHints.getOrDefault(partitionId, ErrorResponseWriter.NO_LEADER), "not leader"));
                    return;
                }
                final int count = append.records().count();
                final long first = nextPosition.getAndAdd(count);
                response.respond(writer(MessageHeaderEncoder.ENCODED_LENGTH + AppendResponseEncoder.BLOCK_LENGTH,
                    (out, at) -> new AppendResponseEncoder().wrapAndApplyHeader(out, at, new MessageHeaderEncoder())
                        .partitionId(partitionId).firstPosition(first).count(count)));
            }
            case AdminRequestDecoder.TEMPLATE_ID ->
            {
                final AdminRequestDecoder admin = new AdminRequestDecoder()
                    .wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
                adminsReceived.incrementAndGet();
                lastLeaderTargeted = admin.leaderTargeted();
                final int partitionId = admin.partitionId();
                final long version = admin.version();
                final ExportingState state = switch (admin.kind())
                {
                    case PAUSE_EXPORTING -> ExportingState.PAUSED;
                    case SOFT_PAUSE_EXPORTING -> ExportingState.SOFT_PAUSED;
                    default -> ExportingState.EXPORTING;
                };
                response.respond(writer(MessageHeaderEncoder.ENCODED_LENGTH + AdminResponseEncoder.BLOCK_LENGTH,
                    (out, at) -> new AdminResponseEncoder().wrapAndApplyHeader(out, at, new MessageHeaderEncoder())
                        .brokerId(brokerId).partitionId(partitionId).exportingState(state).version(version)
                        .exportedPosition(7).lastPosition(9)));
            }
            case TopologyRequestDecoder.TEMPLATE_ID ->
            {
                topologiesAnswered.incrementAndGet();
                final Map<Integer, Boolean> snapshot = Map.copyOf(leading);
                final long currentTerm = term;
                final String exporterId = "file";
                final int length2 = MessageHeaderEncoder.ENCODED_LENGTH + TopologyResponseEncoder.BLOCK_LENGTH + 4 +
                    snapshot.size() * (TopologyResponseEncoder.PartitionsEncoder.sbeBlockLength() + 4 +
                    TopologyResponseEncoder.PartitionsEncoder.ExportersEncoder.sbeBlockLength() + 4 + exporterId.length());
                response.respond(writer(length2, (out, at) ->
                {
                    final TopologyResponseEncoder.PartitionsEncoder partitions = new TopologyResponseEncoder()
                        .wrapAndApplyHeader(out, at, new MessageHeaderEncoder())
                        .brokerId(brokerId)
                        .partitionsCount(snapshot.size());
                    for (final Map.Entry<Integer, Boolean> entry : snapshot.entrySet())
                    {
                        partitions.next()
                            .partitionId(entry.getKey())
                            .role(entry.getValue() ? PartitionRole.LEADER : PartitionRole.FOLLOWER)
                            .term(currentTerm)
                            .leaderId(entry.getValue() ? brokerId : leaderHints.getOrDefault(entry.getKey(), -1))
                            .exportingState(ExportingState.EXPORTING)
                            .exportingStateVersion(0)
                            .lastPosition(nextPosition.get() - 1)
                            .exportedPosition(0)
                            .exportersCount(1).next().position(0).exporterId(exporterId);
                    }
                }));
            }
            default -> response.respond(ErrorResponseWriter.of(ErrorCode.UNSUPPORTED, 0, -1, "unsupported"));
        }
    }

    private interface Encode
    {
        void encode(MutableDirectBuffer buffer, int offset);
    }

    private static MessageWriter writer(final int length, final Encode encode)
    {
        return new MessageWriter()
        {
            public int encodedLength()
            {
                return length;
            }

            public void write(final MutableDirectBuffer buffer, final int offset)
            {
                encode.encode(buffer, offset);
            }
        };
    }

    private static MessageWriter bytes(final byte[] bytes)
    {
        return writer(bytes.length, (buffer, offset) -> buffer.putBytes(offset, bytes));
    }

    @Override
    public void close()
    {
        server.close();
    }
}
