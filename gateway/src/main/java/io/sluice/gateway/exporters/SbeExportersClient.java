package io.sluice.gateway.exporters;

import io.sluice.gateway.broker.AdminRequests;
import io.sluice.gateway.broker.BrokerRequests;
import io.sluice.gateway.broker.MalformedResponseException;
import io.sluice.gateway.broker.ResponseFrames;
import io.sluice.protocol.cluster.ExporterStatus;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.ExportersStatusRequestEncoder;
import io.sluice.protocol.codecs.ExportersStatusResponseDecoder;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.transport.TransportClient;
import org.agrona.DirectBuffer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.sluice.gateway.broker.ResponseFrames.checkLimit;
import static io.sluice.gateway.broker.ResponseFrames.checkPartition;
import static io.sluice.gateway.broker.ResponseFrames.checkVarData;

/**
 * {@link ExportersClient} on the gateway's one request path ({@link BrokerRequests}, through {@link AdminRequests}),
 * with per-thread codecs; every variable-length field of the answer is bounds-checked before it is read.
 */
public final class SbeExportersClient implements ExportersClient
{
    private final AdminRequests<Codecs> requests;

    public SbeExportersClient(final TransportClient transport, final PartitionDistribution distribution)
    {
        this.requests = new AdminRequests<>(transport, distribution, Codecs::new);
    }

    @Override
    public CompletableFuture<PartitionExporters> status(final int brokerId, final int partitionId, final Duration timeout)
    {
        return requests.send(brokerId, partitionId, ExportersStatusRequestEncoder.BLOCK_LENGTH,
            (codecs, buffer, offset) -> codecs.request.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .partitionId(partitionId),
            timeout, (codecs, buffer, what) -> decode(codecs, buffer, partitionId, what));
    }

    static PartitionExporters decode(final Codecs codecs, final DirectBuffer buffer, final int partitionId, final String what)
    {
        return ResponseFrames.decode(buffer, codecs.response, what, "exporters answer", (response, length) ->
        {
            checkPartition(response.partitionId(), partitionId, what);
            final ExportingState state = response.exportingState();
            if (state == ExportingState.SBE_UNKNOWN || state == ExportingState.NULL_VAL)
            {
                throw new MalformedResponseException(what + ": unknown exporting state " + response.exportingStateRaw());
            }
            final long lastPosition = response.lastPosition();
            checkLimit(response.limit() + 4, length, what); // the group header
            final List<ExporterStatus> exporters = new ArrayList<>();
            for (final ExportersStatusResponseDecoder.ExportersDecoder exporter : response.exporters())
            {
                checkLimit(response.limit(), length, what);
                final long position = exporter.position();
                final boolean retrying = exporter.retrying() == BooleanType.TRUE;
                final long failures = exporter.failures();
                final long deadLetters = exporter.deadLetters();
                final long sinkWrites = exporter.sinkWrites();
                final long sinkWriteNanos = exporter.sinkWriteNanos();
                // A version 4 broker's answer reads the null value: no range.
                final long unavailableFrom = Math.max(0, exporter.unavailableFrom());
                final long unavailableTo = unavailableFrom == 0 ? 0 : Math.max(0, exporter.unavailableTo());
                // A version 4 broker does not say: its sink has at least what it acknowledged.
                final long sentPosition = Math.max(position, exporter.sentPosition());
                checkVarData(buffer, response.limit(), length, what);
                final String id = exporter.exporterId();
                checkVarData(buffer, response.limit(), length, what);
                final String type = exporter.exporterType();
                checkVarData(buffer, response.limit(), length, what);
                final String lastError = exporter.lastError();
                checkLimit(response.limit(), length, what);
                exporters.add(new ExporterStatus(id, type, position, retrying, lastError.isEmpty() ? null : lastError,
                    failures, deadLetters, sinkWrites, sinkWriteNanos, unavailableFrom, unavailableTo, sentPosition));
            }
            return new PartitionExporters(partitionId, state, lastPosition, List.copyOf(exporters));
        });
    }

    private static final class Codecs
    {
        final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
        final ExportersStatusRequestEncoder request = new ExportersStatusRequestEncoder();
        final ExportersStatusResponseDecoder response = new ExportersStatusResponseDecoder();
    }
}
