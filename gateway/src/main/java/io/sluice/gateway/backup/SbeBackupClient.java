package io.sluice.gateway.backup;

import io.sluice.gateway.broker.BrokerRequests;
import io.sluice.gateway.broker.MalformedResponseException;
import io.sluice.gateway.broker.RequestWriters;
import io.sluice.gateway.broker.ResponseFrames;
import io.sluice.protocol.backup.BackupManifest.PartitionCut;
import io.sluice.protocol.backup.BackupManifest.SinkCut;
import io.sluice.protocol.codecs.BackupHoldAction;
import io.sluice.protocol.codecs.BackupHoldRequestEncoder;
import io.sluice.protocol.codecs.BackupHoldResponseDecoder;
import io.sluice.protocol.codecs.SinkSnapshotAction;
import io.sluice.protocol.codecs.SinkSnapshotsRequestEncoder;
import io.sluice.protocol.codecs.SinkSnapshotsResponseDecoder;
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
import java.util.ArrayList;
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

    @Override
    public CompletableFuture<Long> takeHold(final int brokerId, final long backupId, final Duration lease, final Duration timeout)
    {
        return hold(brokerId, 0, backupId, BackupHoldAction.TAKE, lease.toMillis(), timeout);
    }

    @Override
    public CompletableFuture<Long> awaitHoldObeyed(
        final int brokerId, final int partitionId, final long backupId, final Duration timeout)
    {
        return hold(brokerId, partitionId, backupId, BackupHoldAction.OBEY, 0, timeout);
    }

    @Override
    public CompletableFuture<Long> releaseHold(final int brokerId, final long backupId, final Duration timeout)
    {
        return hold(brokerId, 0, backupId, BackupHoldAction.RELEASE, 0, timeout);
    }

    private CompletableFuture<Long> hold(
        final int brokerId, final int partitionId, final long backupId, final BackupHoldAction action,
        final long leaseMillis, final Duration timeout)
    {
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + BackupHoldRequestEncoder.BLOCK_LENGTH;
        final MessageWriter request = RequestWriters.of(length, (buffer, offset) ->
        {
            final Codecs codecs = CODECS.get();
            codecs.holdRequest.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .backupId(backupId)
                .action(action)
                .partitionId(partitionId)
                .leaseMillis(leaseMillis);
        });
        final String what = action == BackupHoldAction.OBEY ? "partition " + partitionId + " on broker " + brokerId :
            "broker " + brokerId;
        return requests.send(brokerId, request, timeout, (buffer) -> ResponseFrames.decode(buffer,
            BackupHoldResponseDecoder.TEMPLATE_ID, what, "backup hold answer", (header, frameLength) ->
            {
                final BackupHoldResponseDecoder response = CODECS.get().holdResponse.wrap(
                    buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
                checkLimit(response.limit(), frameLength, what);
                return response.heldBackupId();
            }));
    }

    @Override
    public CompletableFuture<List<SinkCut>> sinkSnapshots(
        final int brokerId, final long backupId, final boolean take, final Duration timeout)
    {
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + SinkSnapshotsRequestEncoder.BLOCK_LENGTH;
        final MessageWriter request = RequestWriters.of(length, (buffer, offset) ->
        {
            final Codecs codecs = CODECS.get();
            codecs.sinksRequest.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .backupId(backupId)
                .action(take ? SinkSnapshotAction.TAKE : SinkSnapshotAction.CHECK)
                .timeoutMillis(Math.max(1, timeout.toMillis()));
        });
        final String what = "broker " + brokerId;
        return requests.send(brokerId, request, timeout, (buffer) -> ResponseFrames.decode(buffer,
            SinkSnapshotsResponseDecoder.TEMPLATE_ID, what, "sink snapshots answer", (header, frameLength) ->
            {
                final SinkSnapshotsResponseDecoder response = CODECS.get().sinksResponse.wrap(
                    buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
                final List<SinkCut> sinks = new ArrayList<>();
                for (final SinkSnapshotsResponseDecoder.SinksDecoder sink : response.sinks())
                {
                    checkVarData(buffer, response.limit(), frameLength, what);
                    final String exporterId = sink.exporterId();
                    checkVarData(buffer, response.limit(), frameLength, what);
                    final String snapshot = sink.snapshot();
                    checkVarData(buffer, response.limit(), frameLength, what);
                    final String state = sink.state();
                    checkVarData(buffer, response.limit(), frameLength, what);
                    final String detail = sink.detail();
                    sinks.add(new SinkCut(exporterId, snapshot, state, detail));
                }
                checkLimit(response.limit(), frameLength, what);
                return sinks;
            }));
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
        final BackupHoldRequestEncoder holdRequest = new BackupHoldRequestEncoder();
        final BackupHoldResponseDecoder holdResponse = new BackupHoldResponseDecoder();
        final SinkSnapshotsRequestEncoder sinksRequest = new SinkSnapshotsRequestEncoder();
        final SinkSnapshotsResponseDecoder sinksResponse = new SinkSnapshotsResponseDecoder();
    }
}
