package io.sluice.gateway.backup;

import io.sluice.gateway.broker.BrokerRequests;
import io.sluice.gateway.broker.MalformedResponseException;
import io.sluice.gateway.broker.RequestWriters;
import io.sluice.gateway.broker.ResponseFrames;
import io.sluice.protocol.backup.BackupManifest.PartitionCut;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.BackupPartitionRequestEncoder;
import io.sluice.protocol.codecs.BackupPartitionResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.TransportClient;
import org.agrona.DirectBuffer;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static io.sluice.gateway.broker.ResponseFrames.checkLimit;
import static io.sluice.gateway.broker.ResponseFrames.checkVarData;

/** {@link BackupClient} on the gateway's one request path ({@link BrokerRequests}). */
public final class SbeBackupClient implements BackupClient
{
    private static final ThreadLocal<Codecs> CODECS = ThreadLocal.withInitial(Codecs::new);

    private final BrokerRequests requests;

    public SbeBackupClient(final TransportClient transport, final PartitionDistribution distribution)
    {
        this.requests = new BrokerRequests(transport, distribution);
    }

    @Override
    public CompletableFuture<PartitionCut> capture(
        final int brokerId, final int partitionId, final long backupId, final Duration timeout)
    {
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + BackupPartitionRequestEncoder.BLOCK_LENGTH;
        final MessageWriter request = RequestWriters.of(length, (buffer, offset) ->
        {
            final Codecs codecs = CODECS.get();
            codecs.request.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .partitionId(partitionId)
                .backupId(backupId);
        });
        return requests.send(new PartitionReplica(brokerId, partitionId), request, timeout,
            (buffer, target, what) -> decode(buffer, partitionId, what));
    }

    static PartitionCut decode(final DirectBuffer buffer, final int partitionId, final String what)
    {
        final Codecs codecs = CODECS.get();
        return ResponseFrames.decode(buffer, BackupPartitionResponseDecoder.TEMPLATE_ID, what, "backup answer",
            (header, length) ->
        {
            final BackupPartitionResponseDecoder response = codecs.response.wrap(
                buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
            if (response.partitionId() != partitionId)
            {
                throw new MalformedResponseException(what + ": answer is for partition " + response.partitionId());
            }
            final int brokerId = response.brokerId();
            final long checkpoint = response.checkpointPosition();
            final Map<String, Long> positions = new HashMap<>();
            for (final BackupPartitionResponseDecoder.ExportersDecoder exporter : response.exporters())
            {
                final long position = exporter.position();
                checkVarData(buffer, response.limit(), length, what);
                positions.put(exporter.exporterId(), position);
            }
            checkLimit(response.limit(), length, what);
            return new PartitionCut(partitionId, brokerId, checkpoint, positions, List.of());
        });
    }

    private static final class Codecs
    {
        final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
        final BackupPartitionRequestEncoder request = new BackupPartitionRequestEncoder();
        final BackupPartitionResponseDecoder response = new BackupPartitionResponseDecoder();
    }
}
