package io.sluice.gateway.backup;

import io.sluice.gateway.broker.AdminRequests;
import io.sluice.gateway.broker.BrokerRequests;
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
import io.sluice.protocol.codecs.BackupPartitionRequestEncoder;
import io.sluice.protocol.codecs.BackupPartitionResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.transport.TransportClient;
import org.agrona.DirectBuffer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static io.sluice.gateway.broker.ResponseFrames.checkLimit;
import static io.sluice.gateway.broker.ResponseFrames.checkPartition;
import static io.sluice.gateway.broker.ResponseFrames.checkVarData;

/** {@link BackupClient} on the gateway's one request path ({@link BrokerRequests}, through {@link AdminRequests}). */
public final class SbeBackupClient implements BackupClient
{
    private final AdminRequests<Codecs> requests;

    public SbeBackupClient(final TransportClient transport, final PartitionDistribution distribution)
    {
        this.requests = new AdminRequests<>(transport, distribution, Codecs::new);
    }

    @Override
    public CompletableFuture<PartitionCut> capture(
        final int brokerId, final int partitionId, final long backupId, final Duration timeout)
    {
        return requests.send(brokerId, partitionId, BackupPartitionRequestEncoder.BLOCK_LENGTH,
            (codecs, buffer, offset) -> codecs.request.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .partitionId(partitionId)
                .backupId(backupId),
            timeout, (codecs, buffer, what) -> decode(codecs, buffer, partitionId, what));
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
        final String what = action == BackupHoldAction.OBEY ? "partition " + partitionId + " on broker " + brokerId :
            "broker " + brokerId;
        return requests.send(brokerId, BackupHoldRequestEncoder.BLOCK_LENGTH,
            (codecs, buffer, offset) -> codecs.holdRequest.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .backupId(backupId)
                .action(action)
                .partitionId(partitionId)
                .leaseMillis(leaseMillis),
            timeout, what, SbeBackupClient::decodeHold);
    }

    private static long decodeHold(final Codecs codecs, final DirectBuffer buffer, final String what)
    {
        return ResponseFrames.decode(buffer, codecs.holdResponse, what, "backup hold answer", (response, frameLength) ->
        {
            checkLimit(response.limit(), frameLength, what);
            return response.heldBackupId();
        });
    }

    @Override
    public CompletableFuture<List<SinkCut>> sinkSnapshots(
        final int brokerId, final long backupId, final boolean take, final Duration timeout)
    {
        return requests.send(brokerId, SinkSnapshotsRequestEncoder.BLOCK_LENGTH,
            (codecs, buffer, offset) -> codecs.sinksRequest.wrapAndApplyHeader(buffer, offset, codecs.headerEncoder)
                .backupId(backupId)
                .action(take ? SinkSnapshotAction.TAKE : SinkSnapshotAction.CHECK)
                .timeoutMillis(Math.max(1, timeout.toMillis())),
            timeout, "broker " + brokerId, SbeBackupClient::decodeSinks);
    }

    private static List<SinkCut> decodeSinks(final Codecs codecs, final DirectBuffer buffer, final String what)
    {
        return ResponseFrames.decode(buffer, codecs.sinksResponse, what, "sink snapshots answer", (response, frameLength) ->
        {
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
        });
    }

    static PartitionCut decode(final Codecs codecs, final DirectBuffer buffer, final int partitionId, final String what)
    {
        return ResponseFrames.decode(buffer, codecs.response, what, "backup answer", (response, length) ->
        {
            checkPartition(response.partitionId(), partitionId, what);
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
