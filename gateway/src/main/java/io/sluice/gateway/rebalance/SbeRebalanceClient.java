package io.sluice.gateway.rebalance;

import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.gateway.broker.MalformedResponseException;
import io.sluice.gateway.broker.ResponseFrames;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.RebalanceRequestEncoder;
import io.sluice.protocol.codecs.RebalanceResponseDecoder;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.TransportClient;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import static io.sluice.gateway.broker.ResponseFrames.checkLimit;
import static io.sluice.gateway.broker.ResponseFrames.checkVarData;

/**
 * {@link RebalanceClient} over the shared {@link TransportClient}: requests keep only their values and encode with
 * per-thread encoders; answers are checked by {@link ResponseFrames} and bounds-checked before the reason is read.
 */
public final class SbeRebalanceClient implements RebalanceClient
{
    private static final ThreadLocal<Codecs> CODECS = ThreadLocal.withInitial(Codecs::new);

    private final TransportClient transport;
    private final PartitionDistribution distribution;

    public SbeRebalanceClient(final TransportClient transport, final PartitionDistribution distribution)
    {
        this.transport = transport;
        this.distribution = distribution;
    }

    @Override
    public CompletableFuture<RebalanceAnswer> rebalance(
        final int brokerId, final int partitionId, final Duration transferTimeout, final Duration timeout)
    {
        if (!distribution.contains(brokerId, partitionId))
        {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                "partition " + partitionId + " on broker " + brokerId + " is not in the cluster's distribution"));
        }
        final long transferMs = Math.max(1, transferTimeout.toMillis());
        final MessageWriter request = new MessageWriter()
        {
            public int encodedLength()
            {
                return MessageHeaderEncoder.ENCODED_LENGTH + RebalanceRequestEncoder.BLOCK_LENGTH;
            }

            public void write(final MutableDirectBuffer buffer, final int offset)
            {
                final Codecs codecs = CODECS.get();
                codecs.request.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                    .partitionId(partitionId)
                    .timeoutMs(transferMs);
            }
        };
        final String what = "partition " + partitionId + " on broker " + brokerId;
        try
        {
            return transport.send(distribution.commandAddress(brokerId), request, timeout)
                .thenApply((buffer) -> decode(buffer, partitionId, what));
        }
        catch (final RuntimeException e)
        {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Decodes a RebalanceResponse for the partition; an ErrorResponse becomes a BrokerErrorException. */
    static RebalanceAnswer decode(final DirectBuffer buffer, final int partitionId, final String what)
    {
        final Codecs codecs = CODECS.get();
        try
        {
            final int length = ResponseFrames.checkHeader(
                codecs.header, codecs.error, buffer, RebalanceResponseDecoder.TEMPLATE_ID, what);
            final RebalanceResponseDecoder response = codecs.response.wrap(
                buffer, MessageHeaderDecoder.ENCODED_LENGTH, codecs.header.blockLength(), codecs.header.version());
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
        }
        catch (final BrokerErrorException | MalformedResponseException e)
        {
            throw e;
        }
        catch (final RuntimeException e)
        {
            throw new MalformedResponseException(what + ": undecodable rebalance answer: " + e, e);
        }
    }

    private static final class Codecs
    {
        final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
        final RebalanceRequestEncoder request = new RebalanceRequestEncoder();
        final MessageHeaderDecoder header = new MessageHeaderDecoder();
        final ErrorResponseDecoder error = new ErrorResponseDecoder();
        final RebalanceResponseDecoder response = new RebalanceResponseDecoder();
    }
}
