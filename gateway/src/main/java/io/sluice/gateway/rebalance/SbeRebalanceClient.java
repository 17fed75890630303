package io.sluice.gateway.rebalance;

import io.sluice.gateway.broker.BrokerRequests;
import io.sluice.gateway.broker.MalformedResponseException;
import io.sluice.gateway.broker.RequestWriters;
import io.sluice.gateway.broker.ResponseFrames;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.RebalanceRequestEncoder;
import io.sluice.protocol.codecs.RebalanceResponseDecoder;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.TransportClient;
import org.agrona.DirectBuffer;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import static io.sluice.gateway.broker.ResponseFrames.checkLimit;
import static io.sluice.gateway.broker.ResponseFrames.checkVarData;

/**
 * {@link RebalanceClient} on the gateway's one request path ({@link BrokerRequests}): requests keep only their values and encode with
 * per-thread encoders; answers are checked by {@link ResponseFrames} and bounds-checked before the reason is read.
 */
public final class SbeRebalanceClient implements RebalanceClient
{
    private static final ThreadLocal<Codecs> CODECS = ThreadLocal.withInitial(Codecs::new);

    private final BrokerRequests requests;

    public SbeRebalanceClient(final TransportClient transport, final PartitionDistribution distribution)
    {
        this.requests = new BrokerRequests(transport, distribution);
    }

    @Override
    public CompletableFuture<RebalanceAnswer> rebalance(
        final int brokerId, final int partitionId, final Duration transferTimeout, final Duration timeout)
    {
        final long transferMs = Math.max(1, transferTimeout.toMillis());
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + RebalanceRequestEncoder.BLOCK_LENGTH;
        final MessageWriter request = RequestWriters.of(length, (buffer, offset) ->
        {
            final Codecs codecs = CODECS.get();
            codecs.request.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .partitionId(partitionId)
                .timeoutMs(transferMs);
        });
        return requests.send(new PartitionReplica(brokerId, partitionId), request, timeout,
            (buffer, target, what) -> decode(buffer, partitionId, what));
    }

    /** Decodes a RebalanceResponse for the partition; an ErrorResponse becomes a BrokerErrorException. */
    static RebalanceAnswer decode(final DirectBuffer buffer, final int partitionId, final String what)
    {
        final Codecs codecs = CODECS.get();
        return ResponseFrames.decode(buffer, RebalanceResponseDecoder.TEMPLATE_ID, what, "rebalance answer",
            (header, length) ->
        {
            final RebalanceResponseDecoder response = codecs.response.wrap(
                buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
            if (response.partitionId() != partitionId)
            {
                throw new MalformedResponseException(what + ": answer is for partition " + response.partitionId());
            }
            final int preferred = response.preferredBrokerId();
            final int leader = response.leaderId();
            checkVarData(buffer, response.limit(), length, what);
            final String reason = response.reason();
            checkLimit(response.limit(), length, what);
            return new RebalanceAnswer(partitionId, preferred, leader, reason.isEmpty() ? null : reason);
        });
    }

    private static final class Codecs
    {
        final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
        final RebalanceRequestEncoder request = new RebalanceRequestEncoder();
        final RebalanceResponseDecoder response = new RebalanceResponseDecoder();
    }
}
