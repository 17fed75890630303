package io.sluice.gateway.broker;

import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.TransportClient;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * One admin round trip of a client of the brokers' APIs (exporters, backfill, backup, rebalance) on the gateway's one
 * request path ({@link BrokerRequests}): the request encoded with the client's codecs {@code C}, sent with a
 * deadline, and its answer decoded with them (inside {@link ResponseFrames#decode}, so an ErrorResponse fails the
 * future with a {@link BrokerErrorException}). Requests keep only their values; the codecs are held per thread and
 * reused, because the transport may write and read on any of its threads.
 * <p>
 * Thread-safe; decoders run on transport I/O threads and must not block.
 */
public final class AdminRequests<C>
{
    private final BrokerRequests requests;
    private final ThreadLocal<C> codecs;

    /** @param codecs makes one thread's codecs of the client, once per thread. */
    public AdminRequests(final TransportClient transport, final PartitionDistribution distribution, final Supplier<C> codecs)
    {
        this.requests = new BrokerRequests(transport, distribution);
        this.codecs = ThreadLocal.withInitial(codecs);
    }

    /**
     * A request about partition {@code partitionId}'s replica on broker {@code brokerId}, refused without a send when
     * the pair is not in the distribution; the decoder's {@code what} names the pair ("partition 2 on broker 0").
     *
     * @param bodyLength the request's length after its message header.
     */
    public <T> CompletableFuture<T> send(
        final int brokerId, final int partitionId, final int bodyLength, final Encoder<C> encoder, final Duration timeout,
        final Decoder<C, T> decoder)
    {
        return requests.send(new PartitionReplica(brokerId, partitionId), writer(bodyLength, encoder), timeout,
            (buffer, target, what) -> decoder.decode(codecs.get(), buffer, what));
    }

    /**
     * A request to broker {@code brokerId} of the distribution (the caller checked the id); {@code what} names it in the
     * decoder's errors.
     *
     * @param bodyLength the request's length after its message header.
     */
    public <T> CompletableFuture<T> send(
        final int brokerId, final int bodyLength, final Encoder<C> encoder, final Duration timeout, final String what,
        final Decoder<C, T> decoder)
    {
        return requests.send(brokerId, writer(bodyLength, encoder), timeout,
            (buffer) -> decoder.decode(codecs.get(), buffer, what));
    }

    private MessageWriter writer(final int bodyLength, final Encoder<C> encoder)
    {
        return RequestWriters.of(MessageHeaderEncoder.ENCODED_LENGTH + bodyLength,
            (buffer, offset) -> encoder.encode(codecs.get(), buffer, offset));
    }

    /** Writes one request, its message header first, at {@code offset} with this thread's codecs. */
    @FunctionalInterface
    public interface Encoder<C>
    {
        void encode(C codecs, MutableDirectBuffer buffer, int offset);
    }

    /** Decodes one answer with this thread's codecs; {@code what} names its sender for error messages. */
    @FunctionalInterface
    public interface Decoder<C, T>
    {
        T decode(C codecs, DirectBuffer buffer, String what);
    }
}
