package io.sluice.broker.command;

import io.sluice.broker.backup.PartitionBackups;
import io.sluice.broker.backup.SinkBackups;
import io.sluice.broker.control.BackupHold;
import io.sluice.protocol.codecs.BackupHoldResponseEncoder;
import io.sluice.protocol.codecs.SinkSnapshotsResponseEncoder;
import io.sluice.broker.control.BackfillClaim;
import io.sluice.broker.control.BackfillClaims;
import io.sluice.broker.control.EmptyBackfill;
import io.sluice.broker.leadership.RebalanceOutcome;
import io.sluice.protocol.cluster.ExporterStatus;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.AdminResponseEncoder;
import io.sluice.protocol.codecs.AppendResponseEncoder;
import io.sluice.protocol.codecs.BackfillClaimPhase;
import io.sluice.protocol.codecs.BackupPartitionResponseEncoder;
import io.sluice.protocol.codecs.BackfillClaimResponseEncoder;
import io.sluice.protocol.codecs.BackfillClaimsResponseEncoder;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.ExportersStatusResponseEncoder;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.RebalanceResponseEncoder;
import io.sluice.protocol.codecs.TopologyResponseEncoder;
import io.sluice.protocol.transport.MessageWriter;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Encoders of the broker's answers; each writer holds its values and is used once, on any thread. */
final class ResponseWriters
{
    private ResponseWriters()
    {
    }

    static MessageWriter append(final int partitionId, final long firstPosition, final int count)
    {
        return new MessageWriter()
        {
            public int encodedLength()
            {
                return MessageHeaderEncoder.ENCODED_LENGTH + AppendResponseEncoder.BLOCK_LENGTH;
            }

            public void write(final MutableDirectBuffer buffer, final int offset)
            {
                new AppendResponseEncoder()
                    .wrapAndApplyHeader(buffer, offset, new MessageHeaderEncoder())
                    .partitionId(partitionId)
                    .firstPosition(firstPosition)
                    .count(count);
            }
        };
    }

    static MessageWriter admin(final int brokerId, final PartitionStatus status)
    {
        return new MessageWriter()
        {
            public int encodedLength()
            {
                return MessageHeaderEncoder.ENCODED_LENGTH + AdminResponseEncoder.BLOCK_LENGTH;
            }

            public void write(final MutableDirectBuffer buffer, final int offset)
            {
                new AdminResponseEncoder()
                    .wrapAndApplyHeader(buffer, offset, new MessageHeaderEncoder())
                    .brokerId(brokerId)
                    .partitionId(status.partitionId())
                    .exportingState(status.exportingState())
                    .version(status.exportingStateVersion())
                    .exportedPosition(status.exportedPosition())
                    .lastPosition(status.lastPosition())
                    .sinceMicros(status.hold().sinceMicros())
                    .expiresAtMicros(status.hold().expiresAtMicros());
            }
        };
    }

    static MessageWriter topology(
        final int brokerId, final int controlLeaderId, final boolean controlCaughtUp, final List<PartitionStatus> partitions,
        final double diskUsedRatio, final long diskFreeBytes, final long appendsRefusedDisk,
        final long leaseExpiries)
    {
        int length = MessageHeaderEncoder.ENCODED_LENGTH + TopologyResponseEncoder.BLOCK_LENGTH +
            TopologyResponseEncoder.PartitionsEncoder.sbeHeaderSize();
        for (final PartitionStatus status : partitions)
        {
            length += TopologyResponseEncoder.PartitionsEncoder.sbeBlockLength() +
                TopologyResponseEncoder.PartitionsEncoder.ExportersEncoder.sbeHeaderSize();
            for (final String id : status.exporterPositions().keySet())
            {
                length += TopologyResponseEncoder.PartitionsEncoder.ExportersEncoder.sbeBlockLength() +
                    TopologyResponseEncoder.PartitionsEncoder.ExportersEncoder.exporterIdHeaderLength() +
                    id.getBytes(StandardCharsets.UTF_8).length;
            }
        }
        final int encodedLength = length;
        return new MessageWriter()
        {
            public int encodedLength()
            {
                return encodedLength;
            }

            public void write(final MutableDirectBuffer buffer, final int offset)
            {
                final TopologyResponseEncoder encoder = new TopologyResponseEncoder()
                    .wrapAndApplyHeader(buffer, offset, new MessageHeaderEncoder())
                    .brokerId(brokerId)
                    .controlLeaderId(controlLeaderId < 0 ? TopologyResponseEncoder.controlLeaderIdNullValue() : controlLeaderId)
                    .controlCaughtUp(controlCaughtUp ? BooleanType.TRUE : BooleanType.FALSE)
                    .diskUsedRatio(diskUsedRatio)
                    .diskFreeBytes(diskFreeBytes)
                    .appendsRefusedDisk(appendsRefusedDisk)
                    .leaseExpiries(leaseExpiries);
                final TopologyResponseEncoder.PartitionsEncoder group = encoder.partitionsCount(partitions.size());
                for (final PartitionStatus status : partitions)
                {
                    group.next()
                        .partitionId(status.partitionId())
                        .role(status.role())
                        .term(status.term())
                        .leaderId(status.leaderId())
                        .exportingState(status.exportingState())
                        .exportingStateVersion(status.exportingStateVersion())
                        .lastPosition(status.lastPosition())
                        .exportedPosition(status.exportedPosition())
                        .firstPosition(status.firstPosition())
                        .exportingSinceMicros(status.hold().sinceMicros())
                        .leaseExpiresAtMicros(status.hold().expiresAtMicros())
                        .leaseExpiredAtMicros(status.hold().expiredAtMicros())
                        .sentPosition(status.sentPosition());
                    final TopologyResponseEncoder.PartitionsEncoder.ExportersEncoder exporters =
                        group.exportersCount(status.exporterPositions().size());
                    for (final Map.Entry<String, Long> exporter : status.exporterPositions().entrySet())
                    {
                        exporters.next().position(exporter.getValue()).exporterId(exporter.getKey());
                    }
                }
            }
        };
    }

    static MessageWriter rebalance(final RebalanceOutcome outcome)
    {
        final byte[] reason = outcome.reason() == null ? new byte[0] : outcome.reason().getBytes(StandardCharsets.UTF_8);
        return new MessageWriter()
        {
            public int encodedLength()
            {
                return MessageHeaderEncoder.ENCODED_LENGTH + RebalanceResponseEncoder.BLOCK_LENGTH +
                    RebalanceResponseEncoder.reasonHeaderLength() + reason.length;
            }

            public void write(final MutableDirectBuffer buffer, final int offset)
            {
                new RebalanceResponseEncoder()
                    .wrapAndApplyHeader(buffer, offset, new MessageHeaderEncoder())
                    .partitionId(outcome.partitionId())
                    .preferredBrokerId(outcome.preferredBrokerId())
                    .leaderId(outcome.leaderId())
                    .putReason(reason, 0, reason.length);
            }
        };
    }

    static MessageWriter backupPartition(final PartitionBackups.Captured captured)
    {
        final List<Map.Entry<String, Long>> exporters = new ArrayList<>(new TreeMap<>(captured.exporterPositions()).entrySet());
        final List<byte[]> ids = new ArrayList<>(exporters.size());
        int length = MessageHeaderEncoder.ENCODED_LENGTH + BackupPartitionResponseEncoder.BLOCK_LENGTH +
            BackupPartitionResponseEncoder.ExportersEncoder.sbeHeaderSize();
        for (final Map.Entry<String, Long> exporter : exporters)
        {
            final byte[] id = exporter.getKey().getBytes(StandardCharsets.UTF_8);
            ids.add(id);
            length += BackupPartitionResponseEncoder.ExportersEncoder.sbeBlockLength() +
                BackupPartitionResponseEncoder.ExportersEncoder.exporterIdHeaderLength() + id.length;
        }
        final int encodedLength = length;
        return new MessageWriter()
        {
            public int encodedLength()
            {
                return encodedLength;
            }

            public void write(final MutableDirectBuffer buffer, final int offset)
            {
                final BackupPartitionResponseEncoder response = new BackupPartitionResponseEncoder()
                    .wrapAndApplyHeader(buffer, offset, new MessageHeaderEncoder())
                    .partitionId(captured.partitionId())
                    .brokerId(captured.brokerId())
                    .checkpointPosition(captured.checkpointPosition());
                final BackupPartitionResponseEncoder.ExportersEncoder group = response.exportersCount(exporters.size());
                for (int i = 0; i < exporters.size(); i++)
                {
                    group.next().position(exporters.get(i).getValue()).putExporterId(ids.get(i), 0, ids.get(i).length);
                }
            }
        };
    }

    static MessageWriter backupHold(final BackupHold held, final int partitionId, final int brokerId)
    {
        return new MessageWriter()
        {
            public int encodedLength()
            {
                return MessageHeaderEncoder.ENCODED_LENGTH + BackupHoldResponseEncoder.BLOCK_LENGTH;
            }

            public void write(final MutableDirectBuffer buffer, final int offset)
            {
                new BackupHoldResponseEncoder()
                    .wrapAndApplyHeader(buffer, offset, new MessageHeaderEncoder())
                    .heldBackupId(held == null ? 0 : held.backupId())
                    .partitionId(partitionId)
                    .brokerId(brokerId)
                    .sinceMicros(held == null ? 0 : held.sinceMicros())
                    .expiresAtMicros(held == null ? 0 : held.expiresAtMicros());
            }
        };
    }

    static MessageWriter sinkSnapshots(final int brokerId, final List<SinkBackups.SinkSnapshot> sinks)
    {
        final List<byte[][]> texts = new ArrayList<>(sinks.size());
        int length = MessageHeaderEncoder.ENCODED_LENGTH + SinkSnapshotsResponseEncoder.BLOCK_LENGTH +
            SinkSnapshotsResponseEncoder.SinksEncoder.sbeHeaderSize();
        for (final SinkBackups.SinkSnapshot sink : sinks)
        {
            final byte[][] text = {
                sink.exporterId().getBytes(StandardCharsets.UTF_8),
                sink.snapshot().getBytes(StandardCharsets.UTF_8),
                String.valueOf(sink.state()).getBytes(StandardCharsets.UTF_8),
                truncate(String.valueOf(sink.detail()).getBytes(StandardCharsets.UTF_8), 2048)};
            texts.add(text);
            length += SinkSnapshotsResponseEncoder.SinksEncoder.sbeBlockLength() + 4 * 4 + text[0].length +
                text[1].length + text[2].length + text[3].length;
        }
        final int encodedLength = length;
        return new MessageWriter()
        {
            public int encodedLength()
            {
                return encodedLength;
            }

            public void write(final MutableDirectBuffer buffer, final int offset)
            {
                final SinkSnapshotsResponseEncoder response = new SinkSnapshotsResponseEncoder()
                    .wrapAndApplyHeader(buffer, offset, new MessageHeaderEncoder())
                    .brokerId(brokerId);
                final SinkSnapshotsResponseEncoder.SinksEncoder group = response.sinksCount(texts.size());
                for (final byte[][] text : texts)
                {
                    group.next()
                        .putExporterId(text[0], 0, text[0].length)
                        .putSnapshot(text[1], 0, text[1].length)
                        .putState(text[2], 0, text[2].length)
                        .putDetail(text[3], 0, text[3].length);
                }
            }
        };
    }

    static MessageWriter exportersStatus(
        final int partitionId, final ExportingState state, final long lastPosition, final List<ExporterStatus> exporters)
    {
        final List<byte[][]> texts = new ArrayList<>(exporters.size());
        int length = MessageHeaderEncoder.ENCODED_LENGTH + ExportersStatusResponseEncoder.BLOCK_LENGTH +
            ExportersStatusResponseEncoder.ExportersEncoder.sbeHeaderSize();
        for (final ExporterStatus exporter : exporters)
        {
            final String error = exporter.lastError() == null ? "" : exporter.lastError();
            final byte[][] text = {
                exporter.exporterId().getBytes(StandardCharsets.UTF_8),
                exporter.type().getBytes(StandardCharsets.UTF_8),
                // Bounded: a sink's error can be a whole response body.
                truncate(error.getBytes(StandardCharsets.UTF_8), 2048)};
            texts.add(text);
            length += ExportersStatusResponseEncoder.ExportersEncoder.sbeBlockLength() +
                ExportersStatusResponseEncoder.ExportersEncoder.exporterIdHeaderLength() + text[0].length +
                ExportersStatusResponseEncoder.ExportersEncoder.exporterTypeHeaderLength() + text[1].length +
                ExportersStatusResponseEncoder.ExportersEncoder.lastErrorHeaderLength() + text[2].length;
        }
        final int encodedLength = length;
        return new MessageWriter()
        {
            public int encodedLength()
            {
                return encodedLength;
            }

            public void write(final MutableDirectBuffer buffer, final int offset)
            {
                final ExportersStatusResponseEncoder response = new ExportersStatusResponseEncoder()
                    .wrapAndApplyHeader(buffer, offset, new MessageHeaderEncoder())
                    .partitionId(partitionId)
                    .exportingState(state)
                    .lastPosition(lastPosition);
                final ExportersStatusResponseEncoder.ExportersEncoder group = response.exportersCount(exporters.size());
                for (int i = 0; i < exporters.size(); i++)
                {
                    final ExporterStatus exporter = exporters.get(i);
                    final byte[][] text = texts.get(i);
                    group.next()
                        .position(exporter.acknowledgedPosition())
                        .retrying(exporter.retrying() ? BooleanType.TRUE : BooleanType.FALSE)
                        .failures(exporter.failures())
                        .deadLetters(exporter.deadLetters())
                        .sinkWrites(exporter.sinkWrites())
                        .sinkWriteNanos(exporter.sinkWriteNanos())
                        .unavailableFrom(exporter.unavailableFrom())
                        .unavailableTo(exporter.unavailableTo())
                        .sentPosition(exporter.sentPosition())
                        .putExporterId(text[0], 0, text[0].length)
                        .putExporterType(text[1], 0, text[1].length)
                        .putLastError(text[2], 0, text[2].length);
                }
            }
        };
    }

    /** A BackfillClaimResponse: the change's outcome, its entry's index, the claim held after it and why. */
    static MessageWriter backfillClaim(final BackfillClaims.Answer answer)
    {
        final BackfillClaim held = answer.reply().held();
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        final BackfillClaimResponseEncoder encoder = new BackfillClaimResponseEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .outcome(answer.reply().outcome())
            .claimIndex(answer.index())
            .heldPhase(held == null ? BackfillClaimPhase.NONE : held.phase())
            .heldClaimedAtMs(held == null ? 0 : held.claimedAtMs())
            .heldBackfillId(held == null ? "" : held.backfillId())
            .reason(answer.reply().reason());
        return MessageWriter.of(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    /** A BackfillClaimsResponse: every claim and empty backfill the control group's leader holds. */
    static MessageWriter backfillClaims(final BackfillClaims.View view)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(
            64 + view.claims().size() * 200 + view.emptyBackfills().size() * 200);
        final BackfillClaimsResponseEncoder encoder = new BackfillClaimsResponseEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .nowMs(view.nowMs())
            .appliedIndex(view.appliedIndex());
        final BackfillClaimsResponseEncoder.ClaimsEncoder claims = encoder.claimsCount(view.claims().size());
        for (final BackfillClaim claim : view.claims())
        {
            claims.next()
                .phase(claim.phase())
                .claimedAtMs(claim.claimedAtMs())
                .releasableAtMs(claim.releasableAtMs())
                .claimIndex(claim.claimIndex())
                .exporterId(claim.exporterId())
                .backfillId(claim.backfillId());
        }
        final BackfillClaimsResponseEncoder.EmptyBackfillsEncoder empties =
            encoder.emptyBackfillsCount(view.emptyBackfills().size());
        for (final EmptyBackfill empty : view.emptyBackfills())
        {
            empties.next().createdAtMs(empty.createdAtMs()).backfillId(empty.backfillId()).exporterId(empty.exporterId());
        }
        return MessageWriter.of(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private static byte[] truncate(final byte[] bytes, final int max)
    {
        if (bytes.length <= max)
        {
            return bytes;
        }
        int end = max;
        while (end > 0 && (bytes[end] & 0xC0) == 0x80)
        {
            end--; // not inside a UTF-8 sequence
        }
        return java.util.Arrays.copyOf(bytes, end);
    }
}
