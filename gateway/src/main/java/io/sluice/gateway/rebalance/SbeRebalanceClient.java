package io.sluice.gateway.rebalance;

import io.sluice.gateway.broker.AdminRequests;
import io.sluice.gateway.broker.BrokerRequests;
import io.sluice.gateway.broker.ResponseFrames;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.RebalanceRequestEncoder;
import io.sluice.protocol.codecs.RebalanceResponseDecoder;
import io.sluice.protocol.transport.TransportClient;
import org.agrona.DirectBuffer;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import static io.sluice.gateway.broker.ResponseFrames.checkLimit;
import static io.sluice.gateway.broker.ResponseFrames.checkPartition;
import static io.sluice.gateway.broker.ResponseFrames.checkVarData;

/**
 * {@link RebalanceClient} on the gateway's one request path ({@link BrokerRequests}, through {@link AdminRequests}):
 * requests keep only their values and encode with per-thread encoders; answers are checked by {@link ResponseFrames}
 * and bounds-checked before the reason is read.
 */
public final class SbeRebalanceClient implements RebalanceClient
{
    private final AdminRequests<Codecs> requests;

    public SbeRebalanceClient(final TransportClient transport, final PartitionDistribution distribution)
    {
        this.requests = new AdminRequests<>(transport, distribution, Codecs::new);
    }

    @Override
    public CompletableFuture<RebalanceAnswer> rebalance(
        final int brokerId, final int partitionId, final Duration transferTimeout, final Duration timeout)
    {
        final long transferMs = Math.max(1, transferTimeout.toMillis());
        return requests.send(brokerId, partitionId, RebalanceRequestEncoder.BLOCK_LENGTH,
            (codecs, buffer, offset) -> codecs.request.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .partitionId(partitionId)
                .timeoutMs(transferMs),
            timeout, (codecs, buffer, what) -> decode(codecs, buffer, partitionId, what));
    }

    /** Decodes a RebalanceResponse for the partition; an ErrorResponse becomes a BrokerErrorException. */
    static RebalanceAnswer decode(final Codecs codecs, final DirectBuffer buffer, final int partitionId, final String what)
    {
        return ResponseFrames.decode(buffer, codecs.response, what, "rebalance answer", (response, length) ->
        {
            checkPartition(response.partitionId(), partitionId, what);
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
