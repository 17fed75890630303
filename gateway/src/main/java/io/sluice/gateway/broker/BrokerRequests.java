package io.sluice.gateway.broker;

import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.TransportClient;
import org.agrona.DirectBuffer;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The one request path from the gateway to a broker: one SBE request to one broker's command address with a
 * deadline, its answer correlated by the {@link TransportClient} and decoded by the caller's decoder (which checks
 * the frame and turns an ErrorResponse into a {@link BrokerErrorException} through {@link ResponseFrames#decode}).
 * Every client of the brokers' APIs (appends, admin, topology, exporters, backfill, rebalance) sends through it, so
 * the futures fail the same way everywhere: {@link io.sluice.protocol.transport.RequestTimeoutException} at the
 * deadline, {@link io.sluice.protocol.transport.PeerUnreachableException} when no connection can be had,
 * {@link BrokerErrorException} or {@link MalformedResponseException} for the answer, never a synchronous throw.
 * <p>
 * Thread-safe; decoders run on transport I/O threads and must not block.
 */
public final class BrokerRequests
{
    private final TransportClient transport;
    private final PartitionDistribution distribution;

    public BrokerRequests(final TransportClient transport, final PartitionDistribution distribution)
    {
        this.transport = transport;
        this.distribution = distribution;
    }

    public PartitionDistribution distribution()
    {
        return distribution;
    }

    /**
     * Sends a request about one replica, refused without a send when the pair is not in the distribution; the
     * decoder gets the answer and the pair's name for its error messages.
     */
    public <T> CompletableFuture<T> send(
        final PartitionReplica target,
        final MessageWriter request,
        final Duration timeout,
        final ReplicaAnswerDecoder<T> decoder)
    {
        if (!distribution.contains(target))
        {
            return CompletableFuture.failedFuture(
                new IllegalArgumentException(target + " is not in the cluster's distribution"));
        }
        final String what = target.toString();
        return send(target.brokerId(), request, timeout, buffer -> decoder.decode(buffer, target, what));
    }

    /** Sends a request to a broker of the distribution (the caller checked the id). */
    public <T> CompletableFuture<T> send(
        final int brokerId, final MessageWriter request, final Duration timeout, final Function<DirectBuffer, T> decoder)
    {
        final CompletableFuture<DirectBuffer> response;
        try
        {
            response = transport.send(distribution.commandAddress(brokerId), request, timeout);
        }
        catch (final RuntimeException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        return response.thenApply(decoder);
    }

    /** Decodes one replica's answer; {@code what} names the pair, as in "partition 2 on broker 0". */
    @FunctionalInterface
    public interface ReplicaAnswerDecoder<T>
    {
        T decode(DirectBuffer buffer, PartitionReplica target, String what);
    }
}
